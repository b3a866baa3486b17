#!/bin/bash
# Runs in the verifier's own container, after the agent's is gone; /logs/verifier is fresh.
expected="$(python3 -m greeter Ada)"
if [ -f /app/answer.txt ] && [ "$(cat /app/answer.txt)" = "$expected" ]; then
  echo 1 > /logs/verifier/reward.txt
else
  echo 0 > /logs/verifier/reward.txt
fi

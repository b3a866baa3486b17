#!/bin/bash
python3 -m greeter Ada > /app/answer.txt

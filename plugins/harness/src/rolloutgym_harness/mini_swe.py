"""Run mini-swe-agent (``pip install mini-swe-agent``) on one instruction, its model the endpoint.

``python -m rolloutgym_harness.mini_swe INSTRUCTION_FILE --step-limit N`` is the command behind
``harness:mini-swe-agent``: mini-swe-agent's default agent and its local shell environment in
the current folder, its litellm model pointed at ``OPENAI_BASE_URL`` (the endpoint). Nothing
reaches the network: litellm reads its bundled model list, cost tracking errors are ignored.
Prints the agent's submission (its exit status goes to stderr).
"""

from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description="mini-swe-agent against the rolloutgym endpoint")
    parser.add_argument("instruction_file")
    parser.add_argument("--step-limit", type=int, default=20)
    parser.add_argument("--max-tokens", type=int, default=None)
    options = parser.parse_args(argv)
    os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")
    os.environ.setdefault("MSWEA_COST_TRACKING", "ignore_errors")
    os.environ.setdefault("MSWEA_SILENT_STARTUP", "1")
    base_url = os.environ.get("OPENAI_BASE_URL")
    if not base_url:
        print("OPENAI_BASE_URL is not set: run this through harness:mini-swe-agent", file=sys.stderr)
        return 2
    try:
        import minisweagent
        import yaml
        from minisweagent.agents.default import DefaultAgent
        from minisweagent.environments.local import LocalEnvironment
        from minisweagent.models.litellm_model import LitellmModel
    except ImportError as exc:
        print(f"mini-swe-agent is not installed ({exc}): pip install mini-swe-agent", file=sys.stderr)
        return 2
    config = yaml.safe_load((Path(minisweagent.__file__).parent / "config" / "default.yaml").read_text())
    kwargs = {"api_base": base_url, "api_key": os.environ.get("OPENAI_API_KEY", "local")}
    if options.max_tokens:
        kwargs["max_tokens"] = options.max_tokens
    model = LitellmModel(model_name="openai/rolloutgym", model_kwargs=kwargs, cost_tracking="ignore_errors")
    agent = DefaultAgent(
        model, LocalEnvironment(cwd=os.getcwd()), **{**config["agent"], "step_limit": options.step_limit}
    )
    result = agent.run(Path(options.instruction_file).read_text())
    print(f"mini-swe-agent exit status: {result.get('exit_status')}", file=sys.stderr)
    print(result.get("submission", ""))
    return 0


if __name__ == "__main__":
    sys.exit(main())

"""What the interception endpoint costs, and many harness episodes at once.

1. **CPU per model call added by the endpoint.** The same prompts go to a token-level policy's
   sampler directly and through the endpoint (an HTTP client on another thread posting
   Chat Completions; only the server thread's CPU is counted). The sampler is
   ``ScriptedSampler`` over ``CharRenderer`` (no model work), so the difference is the
   endpoint's share: parsing, rendering, recording, JSON, HTTP. Printed in ms per call against
   the direct call measured in the same run (target: <= 1 ms added).
2. **256 concurrent trivial command-harness episodes** (``toy/arith-v0``; the harness is a shell
   ``printf`` that posts one chat call with ``curl`` when present, else answers without a call):
   episodes per second and resident memory added per episode.

    python benchmarks/harness.py [--calls 400] [--episodes 256]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import resource
import shutil
import tempfile
import time
from pathlib import Path

import httpx
from rolloutgym import arollout_group, get_registry
from rolloutgym.llm import CharRenderer, SamplingParams, ScriptedSampler, TokenPolicy
from rolloutgym_harness import InterceptionEndpoint
from rolloutgym_harness.harness import CommandHarness


def _policy(calls: int) -> TokenPolicy:
    renderer = CharRenderer()
    sampler = ScriptedSampler(
        renderer.encode, ["the answer is 4"] * (calls + 10), end_token_id=renderer.stop_token_ids[0]
    )
    return TokenPolicy(sampler, renderer, max_tokens=64)


async def direct(calls: int) -> float:
    policy = _policy(calls)
    messages = [{"role": "user", "content": "What is 2 + 2?"}]
    params = SamplingParams(max_tokens=64, stop_token_ids=policy.renderer.stop_token_ids)
    started = time.process_time()
    for _ in range(calls):
        prompt = policy.renderer.render_prompt(messages, [])
        sample = await policy.sampler.sample(prompt, params)
        policy.renderer.decode(sample.token_ids)
    return (time.process_time() - started) / calls


def through_endpoint(calls: int) -> float:
    """CPU of the server thread only (uvicorn, Starlette, the endpoint, the sampler): the
    client runs on the main thread and is not counted."""
    body = {"model": "m", "messages": [{"role": "user", "content": "What is 2 + 2?"}], "logprobs": True}
    # a fresh session per call (the prompt stays the same size): room for all of them
    with InterceptionEndpoint(_policy(calls), max_sessions=calls + 1) as endpoint, httpx.Client() as client:
        url = f"{endpoint.openai_base_url}/chat/completions"
        client.post(url, json=body)  # warm-up
        assert endpoint._thread is not None and endpoint._thread.ident is not None
        clock = time.pthread_getcpuclockid(endpoint._thread.ident)
        started = time.clock_gettime(clock)
        for index in range(calls):
            response = client.post(url.replace("/v1", f"/s/{index}/v1"), json=body)
            response.raise_for_status()
        return (time.clock_gettime(clock) - started) / calls


def through_endpoint_h11(calls: int) -> float:
    """The same, with uvicorn's pure-Python h11 parser forced (what served every call before
    ``httptools`` was a dependency): the parser's share of the endpoint's cost, in the same run."""
    import uvicorn

    original = uvicorn.Config.__init__

    def h11_config(self: uvicorn.Config, *args: object, **kwargs: object) -> None:
        kwargs["http"] = "h11"
        original(self, *args, **kwargs)  # type: ignore[arg-type]

    uvicorn.Config.__init__ = h11_config  # type: ignore[method-assign]
    try:
        return through_endpoint(calls)
    finally:
        uvicorn.Config.__init__ = original  # type: ignore[method-assign]


async def harness_episodes(episodes: int) -> tuple[float, float]:
    folder = tempfile.mkdtemp(prefix="rolloutgym-bench-")
    body = Path(folder) / "body.json"
    body.write_text(json.dumps({"model": "m", "messages": [{"role": "user", "content": "hi"}]}))
    post = (
        f"curl -s -o /dev/null -H 'content-type: application/json' -d @{body} \"$OPENAI_BASE_URL/chat/completions\"; "
    )
    command = (post if shutil.which("curl") else "") + "printf 64"
    harness = CommandHarness(command, model=_policy(episodes * 2))
    before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    started = time.perf_counter()
    group = await arollout_group(
        0,
        lambda task: get_registry().make("toy/arith-v0", task=task),
        harness,
        num_rollouts=episodes,
        concurrency=episodes,
    )
    wall = time.perf_counter() - started
    after = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    reasons = {step.policy_stop_reason for trajectory in group.trajectories for step in trajectory.steps}
    assert reasons == {"done"}, reasons
    return episodes / wall, (after - before) / episodes


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--calls", type=int, default=400)
    parser.add_argument("--episodes", type=int, default=256)
    options = parser.parse_args()
    base = asyncio.run(direct(options.calls))
    served = through_endpoint(options.calls)
    print(f"direct sampler call: {base * 1e3:.3f} ms CPU; through the endpoint: {served * 1e3:.3f} ms CPU")
    print(f"endpoint adds {(served - base) * 1e3:.3f} ms CPU per call (target <= 1 ms); ratio {served / base:.1f}x")
    h11 = through_endpoint_h11(options.calls)
    print(f"with uvicorn's h11 parser instead of httptools: {h11 * 1e3:.3f} ms CPU ({h11 / served:.2f}x)")
    rate, memory = asyncio.run(harness_episodes(options.episodes))
    print(
        f"{options.episodes} concurrent command-harness episodes: {rate:.1f} episodes/s, "
        f"{memory:.0f} KiB peak RSS per episode"
    )


if __name__ == "__main__":
    main()

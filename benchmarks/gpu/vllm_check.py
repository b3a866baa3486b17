"""GPU check of rolloutgym-vllm: the offline engine and the server, token-exact, on a real GPU.

Needs a CUDA GPU, ``vllm``, ``torch``, ``transformers`` (``pip install 'rolloutgym-vllm[engine]'``)
and no network: the model is a tiny random Llama built here and saved to a temporary folder
(with the byte-level tokenizer of ``rolloutgym_vllm.testing``), or ``--model PATH`` for a
local model folder. It checks, for the offline engine and then for ``vllm serve``:

1. every rollout is token-exact (``check_provenance == 0``; one logprob per sampled token);
2. vLLM's sampled-token logprobs match a Hugging Face forward pass over the same weights
   (max absolute difference printed; the built-in model only);
3. throughput: episodes per second for 64 concurrent ``toy/arith-v0`` episodes, and the ratio
   of the server path to the offline engine.

    python benchmarks/gpu/vllm_check.py [--model PATH] [--episodes 64] [--skip-server]

Exits non-zero when a check fails.
"""

from __future__ import annotations

import argparse
import asyncio
import socket
import subprocess
import sys
import tempfile
import time
import urllib.request
from pathlib import Path
from typing import Any


def build_tiny_model(folder: Path) -> Path:
    """A random 2-layer Llama over the byte-level test tokenizer, saved with real weights."""
    import torch
    from rolloutgym_vllm.testing import byte_tokenizer
    from transformers import LlamaConfig, LlamaForCausalLM

    tokenizer = byte_tokenizer()
    config = LlamaConfig(
        vocab_size=320,
        hidden_size=128,
        intermediate_size=256,
        num_hidden_layers=2,
        num_attention_heads=4,
        num_key_value_heads=4,
        max_position_embeddings=4096,
        eos_token_id=tokenizer.eos_token_id,
        bos_token_id=tokenizer.pad_token_id,
        pad_token_id=tokenizer.pad_token_id,
        torch_dtype="float32",
    )
    torch.manual_seed(0)
    model = LlamaForCausalLM(config)
    model.save_pretrained(folder, safe_serialization=True)
    tokenizer.save_pretrained(folder)
    return folder


def run_episodes(policy: Any, episodes: int) -> tuple[list[Any], float]:
    from rolloutgym.registry import get_registry
    from rolloutgym.rollouts import arollout_group

    started = time.perf_counter()
    group = asyncio.run(
        arollout_group(
            0,
            lambda task: get_registry().make("toy/arith-v0", task=task),
            policy,
            num_rollouts=episodes,
            concurrency=episodes,
            max_steps=1,
        )
    )
    elapsed = time.perf_counter() - started
    if group.errors:
        raise SystemExit(f"FAIL: {len(group.errors)} episodes failed: {group.errors[0].error_message}")
    return list(group.trajectories), elapsed


def check_exact(name: str, trajectories: list[Any]) -> None:
    from rolloutgym.llm import check_provenance

    mismatches = sum(check_provenance(trajectory) for trajectory in trajectories)
    unaligned = sum(
        1
        for trajectory in trajectories
        for step in trajectory.steps
        if step.policy_tokens is None
        or step.policy_logprobs is None
        or len(step.policy_tokens) != len(step.policy_logprobs)
    )
    print(f"[{name}] provenance mismatches: {mismatches}; steps without aligned tokens/logprobs: {unaligned}")
    if mismatches or unaligned:
        raise SystemExit(f"FAIL: {name} is not token-exact")


def logprob_gap(model_path: Path, trajectory: Any) -> float:
    """Max |vLLM logprob - HF logprob| over the sampled tokens of one trajectory."""
    import torch
    from transformers import AutoModelForCausalLM

    model = AutoModelForCausalLM.from_pretrained(model_path, torch_dtype=torch.float32).to("cuda").eval()
    step = trajectory.steps[0]
    prompt, sampled = list(step.observation_tokens), list(step.policy_tokens)
    ids = torch.tensor([prompt + sampled], device="cuda")
    with torch.no_grad():
        logits = model(ids).logits[0, len(prompt) - 1 : -1].float()
    reference = torch.log_softmax(logits, dim=-1).gather(1, ids[0, len(prompt) :, None])[:, 0]
    return float((reference.cpu() - torch.tensor(step.policy_logprobs)).abs().max())


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def start_server(model_path: Path, port: int) -> subprocess.Popen[bytes]:
    command = [sys.executable, "-m", "vllm.entrypoints.openai.api_server", "--model", str(model_path)]
    command += ["--port", str(port), "--host", "127.0.0.1", "--gpu-memory-utilization", "0.3", "--dtype", "float32"]
    process = subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    deadline = time.monotonic() + 300
    while time.monotonic() < deadline:
        if process.poll() is not None:
            raise SystemExit(
                f"FAIL: vllm serve exited: {process.stderr.read().decode()[-2000:] if process.stderr else ''}"
            )
        try:
            urllib.request.urlopen(f"http://127.0.0.1:{port}/v1/models", timeout=2)
            return process
        except OSError:
            time.sleep(2)
    process.kill()
    raise SystemExit("FAIL: vllm serve did not answer within 300 s")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--model", type=Path, help="a local model folder (default: a tiny random Llama built here)")
    parser.add_argument("--episodes", type=int, default=64)
    parser.add_argument("--skip-server", action="store_true")
    options = parser.parse_args()
    from rolloutgym_vllm import make_policy

    with tempfile.TemporaryDirectory() as scratch:
        model_path = options.model or build_tiny_model(Path(scratch) / "tiny-llama")
        engine_args = {"gpu_memory_utilization": 0.3, "dtype": "float32", "enforce_eager": True}
        policy = make_policy(str(model_path), engine_args=engine_args, max_tokens=24, temperature=1.0, seed=0)
        run_episodes(policy, 4)  # warm-up (CUDA graphs, allocator)
        trajectories, engine_seconds = run_episodes(policy, options.episodes)
        check_exact("offline engine", trajectories)
        print(
            f"[offline engine] {options.episodes} episodes in {engine_seconds:.2f} s = "
            f"{options.episodes / engine_seconds:.1f}/s"
        )
        if options.model is None:
            gap = logprob_gap(model_path, trajectories[0])
            print(f"[offline engine] max |logprob(vLLM) - logprob(HF)| = {gap:.2e}")
            if gap > 5e-2:
                raise SystemExit("FAIL: vLLM logprobs disagree with the model's own forward pass")
        del policy
        if options.skip_server:
            return
        import gc

        gc.collect()
        port = free_port()
        server = start_server(model_path, port)
        try:
            policy = make_policy(
                str(model_path), base_url=f"http://127.0.0.1:{port}/v1", tokenizer=str(model_path), max_tokens=24
            )
            run_episodes(policy, 4)
            trajectories, server_seconds = run_episodes(policy, options.episodes)
            check_exact("server", trajectories)
            print(
                f"[server] {options.episodes} episodes in {server_seconds:.2f} s = "
                f"{options.episodes / server_seconds:.1f}/s"
            )
            print(f"server / offline engine wall time = {server_seconds / engine_seconds:.2f}x")
        finally:
            server.terminate()
            server.wait(timeout=60)
    print("OK")


if __name__ == "__main__":
    main()

"""A token-level :class:`~rolloutgym.llm.Sampler` over vLLM's OpenAI-compatible server.

Prompts go out as token ids (``POST /v1/completions`` with ``prompt`` a list of ints), so
the server never re-tokenises anything; the sampled token ids come back verbatim
(``return_token_ids``, vLLM >= 0.10.2) with one logprob each (``logprobs=0``: the sampled
token's only). Older servers that lack ``return_token_ids`` still identify each sampled
token through ``return_tokens_as_token_ids`` (``"token_id:123"`` strings in ``logprobs``).

Start the server with e.g. ``vllm serve Qwen/Qwen3-0.6B`` and use
``--policy vllm:Qwen/Qwen3-0.6B --base-url http://127.0.0.1:8000/v1``.
"""

from __future__ import annotations

import os
import re
import time
from collections.abc import Mapping, Sequence
from typing import Any

from rolloutgym.llm import Sample, SamplingParams
from rolloutgym.llm.http import JSONClient, RetrySettings
from rolloutgym_protocol.errors import PolicyError

__all__ = ["VLLMServerSampler", "parse_completion"]

_TOKEN_ID = re.compile(r"^token_id:(\d+)$")


class VLLMServerSampler:
    """Samples from a running vLLM server, token ids in and token ids out.

    Args:
        model: the served model name (``vllm serve MODEL``; ``--served-model-name``).
        base_url: the API root, e.g. ``http://127.0.0.1:8000/v1``.
        api_key: the server's ``--api-key`` (default ``$VLLM_API_KEY``), if it has one.
        timeout: seconds one request may take before it is retried.
        max_retries: retries on connection errors, timeouts, 429 and 5xx.
        max_concurrency: requests in flight at once (vLLM batches them on the GPU).
        extra_body: more request fields, sent verbatim (``{"top_k": 20}``).
    """

    def __init__(
        self,
        model: str,
        base_url: str,
        *,
        api_key: str | None = None,
        timeout: float | None = 300.0,
        max_retries: int = 4,
        max_concurrency: int = 256,
        extra_body: Mapping[str, Any] | None = None,
    ) -> None:
        self.model = model
        self.base_url = base_url.rstrip("/")
        self.extra_body = dict(extra_body or {})
        self.client = JSONClient(
            self.base_url,
            api_key=api_key if api_key is not None else os.environ.get("VLLM_API_KEY"),
            timeout=timeout,
            max_concurrency=max_concurrency,
            retry=RetrySettings(max_retries=max_retries),
            service="vLLM server",
            key_hint="set VLLM_API_KEY (the server's --api-key) or pass --policy-arg api_key=KEY",
        )

    def request_body(self, prompt_token_ids: Sequence[int], params: SamplingParams) -> dict[str, Any]:
        """The JSON body of one ``/v1/completions`` request."""
        body: dict[str, Any] = {
            "model": self.model,
            "prompt": [int(token) for token in prompt_token_ids],
            "max_tokens": params.max_tokens,
            "temperature": params.temperature,
            "top_p": params.top_p,
            "logprobs": 0,
            "return_token_ids": True,
            "return_tokens_as_token_ids": True,
            "skip_special_tokens": False,
            "include_stop_str_in_output": True,
            "add_special_tokens": False,
        }
        if params.stop:
            body["stop"] = list(params.stop)
        if params.stop_token_ids:
            body["stop_token_ids"] = list(params.stop_token_ids)
        if params.seed is not None:
            body["seed"] = params.seed
        body.update(self.extra_body)
        body.update(params.extra)
        return body

    async def sample(self, prompt_token_ids: Sequence[int], params: SamplingParams) -> Sample:
        """Sample one continuation of ``prompt_token_ids`` on the server."""
        started = time.perf_counter()
        response = await self.client.post("/completions", self.request_body(prompt_token_ids, params))
        return parse_completion(response, self.base_url, latency=time.perf_counter() - started)


def parse_completion(response: Mapping[str, Any], base_url: str, *, latency: float = 0.0) -> Sample:
    """Turn a vLLM ``/v1/completions`` response into a :class:`~rolloutgym.llm.Sample`.

    Raises:
        PolicyError: no choice, or no way to know the sampled token ids (the server is not
            vLLM, or too old to return them).
    """
    choices = response.get("choices")
    if not isinstance(choices, list) or not choices or not isinstance(choices[0], Mapping):
        raise PolicyError(f"the vLLM server at {base_url} answered without choices: {str(response)[:300]}")
    choice = choices[0]
    raw_logprobs = choice.get("logprobs")
    logprobs_block: Mapping[str, Any] = raw_logprobs if isinstance(raw_logprobs, Mapping) else {}
    token_strings = logprobs_block.get("tokens") or []
    token_logprobs = logprobs_block.get("token_logprobs") or []
    token_ids: list[int] | None = None
    if isinstance(choice.get("token_ids"), list):
        token_ids = [int(token) for token in choice["token_ids"]]
    elif token_strings:
        matches = [_TOKEN_ID.match(str(token)) for token in token_strings]
        if all(match is not None for match in matches):
            token_ids = [int(match.group(1)) for match in matches if match is not None]
    if token_ids is None:
        raise PolicyError(
            f"the server at {base_url} did not return the sampled token ids (neither 'token_ids' nor "
            "'token_id:N' logprob tokens); the vllm policy needs vLLM's OpenAI-compatible server "
            "(>= 0.10.2 for return_token_ids). For other servers use --policy openai:MODEL."
        )
    logprobs: tuple[float, ...] | None = None
    if len(token_logprobs) == len(token_ids) and all(value is not None for value in token_logprobs):
        logprobs = tuple(float(value) for value in token_logprobs)
    finish = choice.get("finish_reason")
    prompt_ids = choice.get("prompt_token_ids")
    if prompt_ids is None:
        prompt_ids = response.get("prompt_token_ids")
    info: dict[str, Any] = {"finish_reason": finish, "latency_s": round(latency, 6)}
    if choice.get("stop_reason") is not None:
        info["matched_stop"] = choice["stop_reason"]
    if response.get("id"):
        info["response_id"] = response["id"]
    return Sample(
        token_ids=tuple(token_ids),
        logprobs=logprobs,
        stop_reason="length" if finish == "length" else "stop",
        prompt_token_ids=tuple(int(token) for token in prompt_ids) if isinstance(prompt_ids, list) else None,
        info=info,
    )

"""The ``chaos`` policy: random hostile actions, to prove that nothing a policy says breaks a run.

Each action is valid-ish for the env's action space, then made hostile: tool calls to the
env's tools with NaN, ±inf, huge or non-ASCII numbers, lone surrogates, strings of hundreds
of KB, arguments nested hundreds of levels, wrong types, missing and extra arguments;
unknown tools, malformed messages and calls, empty actions; text answers made of the same
material. An env must turn every one of them into a scored outcome (an invalid action or a
tool error counted against the policy), never an env error, and the run file must stay
strict JSON. ``chaos:SEED`` is deterministic per task: episode ``k`` of task ``T`` draws
from ``Random(f"{SEED}:{T}:{k}")``.
"""

from __future__ import annotations

import json
import random
from collections import defaultdict
from typing import Any

from rolloutgym_protocol import find_attribute, jsonvalues

__all__ = ["ATTACKS", "ChaosPolicy", "hostile_value"]


def _nested(depth: int, leaf: Any, generator: random.Random) -> Any:
    value = leaf
    for _ in range(depth):
        value = {"a": value} if generator.random() < 0.5 else [value]
    return value


# name -> factory(generator) of one hostile value. Sizes are bounded so a run stays small.
_VALUES: dict[str, Any] = {
    "nan": lambda g: float("nan"),
    "inf": lambda g: float("inf"),
    "-inf": lambda g: float("-inf"),
    "1e400 parsed": lambda g: json.loads("1e400"),
    "int beyond float": lambda g: 10**400 * g.choice((1, -1)),
    "int beyond str limit": lambda g: 7 * 10**5000,
    "int64 edge": lambda g: g.choice((2**63, -(2**63) - 1, 2**64)),
    "negative zero": lambda g: -0.0,
    "lone surrogate": lambda g: g.choice(("\ud800", "a\udfffb", "\udc00\ud800")),
    "non-ASCII digits": lambda g: g.choice(("٣", "３", "𝟛", "٤٢", "१२३", "½", "Ⅻ", "1\u200b2")),
    "non-ASCII text": lambda g: g.choice(("ünïcødé", "\u202eevil", "😀" * 50, "\x00\x01\x1b[2J", "ｓｅｌｅｃｔ", "İ")),
    "huge string": lambda g: g.choice(("A", "٣", "😀 ", "<a>")) * g.randint(100_000, 200_000),
    "injection text": lambda g: g.choice(
        (
            "'; DROP TABLE orders; --",
            "../../../../etc/passwd",
            "<script>alert(1)</script>",
            "${args.x}",
            "{{7*7}}",
            "%s%n",
        )
    ),
    "number as text": lambda g: g.choice(("NaN", "Infinity", "-1e400", "1e400", "9" * 5000, "0x1F", "")),
    "deep nesting": lambda g: _nested(g.randint(200, 800), g.choice((1, "x", None)), g),
    "empty container": lambda g: g.choice(([], {}, "", [[]], {"": {}})),
    "wrong type": lambda g: g.choice((None, True, [1, 2], {"k": "v"}, 3.5, -7, b"\xff\xfe")),
    "tag look-alike": lambda g: g.choice(({"$float": "nan"}, {"$deep": 1}, {"$str": [55296]})),
}
ATTACKS: tuple[str, ...] = (
    *(f"value:{name}" for name in _VALUES),
    "call:hostile arguments",
    "call:missing arguments",
    "call:extra arguments",
    "call:arguments not an object",
    "call:unknown tool",
    "call:empty name",
    "call:many calls",
    "message:empty",
    "message:content not text",
    "message:tool_calls not a list",
    "message:wrong role",
    "message:not a message",
    "answer:hostile text",
)
"""Every kind of attack the policy draws from (the fault figures in the docs count these)."""


def hostile_value(generator: random.Random, name: str | None = None) -> Any:
    """One hostile value (``name`` from the ``value:*`` attacks, or a random one)."""
    key = name or generator.choice(tuple(_VALUES))
    return _VALUES[key](generator)


def _tool_names_and_parameters(environment: Any) -> list[tuple[str, list[str]]]:
    tools = find_attribute(environment, "tools")
    if callable(tools):
        try:
            tools = tools()
        except Exception:
            tools = None
    found = []
    for tool in tools if isinstance(tools, list) else []:
        if not isinstance(tool, dict):
            continue
        function = tool.get("function", tool)
        name = function.get("name") if isinstance(function, dict) else None
        if isinstance(name, str):
            properties = (function.get("parameters") or {}).get("properties") or {}
            found.append((name, list(properties) if isinstance(properties, dict) else []))
    return found


def _text_of(value: Any) -> str:
    """Text for a text answer: strings as they are, anything else as its strict JSON (bounded)."""
    return value if isinstance(value, str) else jsonvalues.dumps(value)[:200_000]


class ChaosPolicy:
    """Random hostile actions for any env (see the module docstring); ``seed`` makes it repeatable.

    Args:
        seed: base seed (``--policy chaos:SEED``).
        final_after: the episode ends with a hostile text answer after at most this many
            actions (budgets may end it sooner).
    """

    def __init__(self, seed: int = 0, *, final_after: int = 4) -> None:
        self.seed = seed
        self.final_after = int(final_after)
        self._episodes: dict[str, int] = defaultdict(int)
        self.attacks: dict[str, int] = defaultdict(int)

    def for_env(self, environment: Any) -> Any:
        task = str(find_attribute(environment, "rolloutgym_task_id") or "")
        episode = self._episodes[task]
        self._episodes[task] += 1
        generator = random.Random(f"{self.seed}:{task}:{episode}")
        space = getattr(environment, "action_space", None)
        chat = type(space).__name__ == "MessageSpace" or bool(_tool_names_and_parameters(environment))
        tools = _tool_names_and_parameters(environment)
        turns = iter(range(1_000_000))

        def act(observation: Any) -> Any:
            turn = next(turns)
            if not chat:
                return self._text_action(generator)
            if turn + 1 >= self.final_after or generator.random() < 0.15:
                return self._final_message(generator)
            return self._chat_action(generator, tools)

        return act

    def __call__(self, observation: Any) -> Any:
        return self._text_action(random.Random(self.seed))

    def _count(self, attack: str) -> None:
        self.attacks[attack] += 1

    def _text_action(self, generator: random.Random) -> Any:
        if generator.random() < 0.25:
            self._count("message:not a message")
            return hostile_value(generator, "wrong type")
        name = generator.choice(tuple(_VALUES))
        self._count(f"value:{name}")
        value = hostile_value(generator, name)
        return value if isinstance(value, str) or generator.random() < 0.3 else _text_of(value)

    def _final_message(self, generator: random.Random) -> Any:
        self._count("answer:hostile text")
        name = generator.choice(tuple(_VALUES))
        self._count(f"value:{name}")
        value = hostile_value(generator, name)
        content = value if isinstance(value, str) else _text_of(value)
        return {"role": "assistant", "content": content}

    def _arguments(self, generator: random.Random, parameters: list[str]) -> dict[str, Any]:
        arguments: dict[str, Any] = {}
        for parameter in parameters:
            name = generator.choice(tuple(_VALUES))
            self._count(f"value:{name}")
            arguments[parameter] = hostile_value(generator, name)
        return arguments

    def _chat_action(self, generator: random.Random, tools: list[tuple[str, list[str]]]) -> Any:
        attack = generator.choice([attack for attack in ATTACKS if attack.startswith(("call:", "message:"))])
        self._count(attack)
        name, parameters = generator.choice(tools) if tools else ("tool", ["x"])
        call: dict[str, Any] = {"id": f"chaos-{generator.randrange(10**6)}", "name": name, "arguments": {}}
        if attack == "call:hostile arguments":
            call["arguments"] = self._arguments(generator, parameters)
        elif attack == "call:missing arguments":
            call["arguments"] = self._arguments(generator, parameters[: max(0, len(parameters) - 1)])
        elif attack == "call:extra arguments":
            call["arguments"] = {**self._arguments(generator, parameters), "unexpected\ud800": hostile_value(generator)}
        elif attack == "call:arguments not an object":
            call["arguments"] = generator.choice(('{"x": NaN}', "[1, 2]", float("nan"), None, '{"x": 1e400}', "\ud800"))
        elif attack == "call:unknown tool":
            call["name"] = generator.choice(("rm_rf", "", "__class__", "guess\ud800", "a" * 10_000, name.upper()))
        elif attack == "call:empty name":
            call["name"] = ""
        elif attack == "call:many calls":
            calls = [
                {**call, "id": f"chaos-{index}", "arguments": self._arguments(generator, parameters)}
                for index in range(50)
            ]
            return {"role": "assistant", "content": "", "tool_calls": calls}
        elif attack == "message:empty":
            return generator.choice(
                ({"role": "assistant", "content": ""}, {"role": "assistant", "content": "", "tool_calls": []}, {})
            )
        elif attack == "message:content not text":
            return {
                "role": "assistant",
                "content": hostile_value(generator, generator.choice(("wrong type", "deep nesting", "nan"))),
            }
        elif attack == "message:tool_calls not a list":
            return {
                "role": "assistant",
                "content": "",
                "tool_calls": generator.choice((call, "call", float("inf"), {"0": call})),
            }
        elif attack == "message:wrong role":
            return {
                "role": generator.choice(("system", "tool", "user", "", None, "\ud800")),
                "content": "hi",
                "tool_calls": [call],
            }
        elif attack == "message:not a message":
            return hostile_value(generator, generator.choice(("wrong type", "huge string", "deep nesting", "nan")))
        return {"role": "assistant", "content": "", "tool_calls": [call]}

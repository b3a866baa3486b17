"""What ``rolloutgym serve`` writes on the wire: orjson where it writes what the json path would, else json.

The fast path must not change a value a client reads: NaN and infinities, integers over
64 bits, non-string keys, lone surrogates and the types JSON does not have take the json path
(``to_jsonable`` for the last), exactly as before; only a ``uuid.UUID`` (its text) and a plain
``enum.Enum`` (its value) are written differently, as documented.
"""

from __future__ import annotations

import asyncio
import collections
import dataclasses
import datetime
import enum
import json
import math
import time
import uuid

import numpy as np
import pytest
from rolloutgym.serve._codec import _ENCODER, dumps_fast, dumps_text, encode_value, loads
from rolloutgym_protocol import EnvSpec, Score, hookimpl


def _json_path(value):
    """What dumps_text wrote before the fast path (the json module, to_jsonable for what it cannot write)."""
    try:
        return _ENCODER.encode(value)
    except (TypeError, ValueError):
        return json.dumps(encode_value(value), ensure_ascii=False, separators=(",", ":"))


class Colour(enum.Enum):
    RED = "red"


class Level(enum.IntEnum):
    HIGH = 3


Pair = collections.namedtuple("Pair", "left right")


@dataclasses.dataclass
class Point:
    x: float
    y: float


SAME = {
    "plain": {"observation": [{"role": "tool", "content": "ok ✓"}], "reward": 0.5, "terminated": False},
    "unicode and escapes": {"text": 'line\nbreak "quoted" \\ tab\t é 😀 \u2028'},
    "floats": [0.1, 1e-7, 1e300, -0.0, 123456789.125, 2.5e-308],
    "ints at 64 bits": [2**63 - 1, -(2**63), 0, -1],
    "nested": {"a": [[[{"b": [1, 2, {"c": True}]}]]]},
    "tuples and namedtuples": {"t": (1, "x", (2.0,)), "n": Pair(1, 2)},
    "int enum": {"level": Level.HIGH},
    "dict subclass": collections.OrderedDict(b=1, a=2),
    "numpy": {"array": np.arange(3, dtype=np.int64), "scalar": np.float32(0.5)},
    "score": {"score": Score(1.0, components={"found": Score(1.0, feedback="yes")}, metadata={"n": 3})},
    "bytes, sets, dataclasses, dates": {
        "bytes": b"\x00\xff",
        "set": {3, 1, 2},
        "point": Point(1.0, 2.5),
        "date": datetime.date(2026, 12, 6),
    },
    "a dict that reads as a tag": {"$bytes": "not bytes"},
    "nan in a dataclass (to_jsonable tags it on both paths)": Point(math.nan, 1.0),
}

# Values the fast path hands to the json module (it would write them differently or refuses them).
JSON_PATH = {
    "nan": {"reward": math.nan},
    "infinity": [math.inf, -math.inf],
    "a None": {"content": None},
    "int over 64 bits": 2**70,
    "int keys": {1: "one", 2: "two"},
    "lone surrogate": "\ud800",
    "deep": json.loads("[" * 300 + "]" * 300),
}


@pytest.mark.parametrize("name", SAME)
def test_fast_path_writes_what_the_json_path_writes(name):
    value = SAME[name]
    fast = dumps_fast(value)
    assert fast is not None, f"{name}: expected the fast path"
    assert loads(fast) == loads(_json_path(value))
    assert dumps_text(value) == fast.decode()


@pytest.mark.parametrize("name", JSON_PATH)
def test_values_the_fast_path_would_change_take_the_json_path(name):
    value = JSON_PATH[name]
    assert dumps_fast(value) is None
    assert dumps_text(value) == _json_path(value)


def test_nan_and_infinity_reach_the_client_as_themselves():
    text = dumps_text({"reward": math.nan, "bounds": [math.inf, -math.inf], "ok": 1.5})
    decoded = loads(text)
    assert math.isnan(decoded["reward"]) and decoded["bounds"] == [math.inf, -math.inf] and decoded["ok"] == 1.5


def test_uuid_and_plain_enum_are_written_as_their_text_and_value():
    identifier = uuid.UUID(int=7)
    assert loads(dumps_text({"id": identifier, "colour": Colour.RED})) == {"id": str(identifier), "colour": "red"}


ECHO_MODULE = """
import json
import gymnasium as gym

SEEN = []  # every action a step got, as JSON text (the test reads it in process)


class EchoEnv(gym.Env):
    metadata = {"nonblocking": True}
    observation_space = gym.spaces.Text(100)
    action_space = gym.spaces.Text(100)

    def reset(self, *, seed=None, options=None):
        super().reset(seed=seed)
        return "ready", {}

    def step(self, action):
        SEEN.append(json.dumps(action))
        return "ok", 0.0, False, False, {}


def make_env(task=None):
    return EchoEnv()


def tasks():
    return ["only"]
"""


class EchoPlugin:
    @hookimpl
    def rolloutgym_envs(self):
        return [EnvSpec("echo/wire-v0", "wire_echo_env_for_tests:make_env", tasks="wire_echo_env_for_tests:tasks")]


def test_a_step_over_the_websocket_gives_the_env_the_action_as_sent(tmp_path, monkeypatch):
    """A real server (uvicorn on 127.0.0.1, in a thread) gets each action as the client passed it.

    A dict that reads as a tag and nesting past ``to_jsonable``'s ``$deep`` limit reach the
    env as they are (the client writes them with orjson); a ``None`` and a NaN take the
    ``to_jsonable`` path, as every action did before.
    """
    import importlib
    import threading

    import uvicorn
    from rolloutgym.registry import Registry
    from rolloutgym.serve import AsyncRemoteEnv, ServeConfig, create_app, free_port

    (tmp_path / "wire_echo_env_for_tests.py").write_text(ECHO_MODULE)
    monkeypatch.syspath_prepend(str(tmp_path))
    registry = Registry(load_entry_points=False)
    registry.register(EchoPlugin(), name="wire-echo")
    port = free_port()
    server = uvicorn.Server(
        uvicorn.Config(
            create_app(ServeConfig(envs=["echo/wire-v0"]), registry=registry),
            host="127.0.0.1",
            port=port,
            ws="websockets-sansio",
            log_level="warning",
        )
    )
    thread = threading.Thread(target=server.run, daemon=True)
    thread.start()
    actions = [
        {"$bytes": "a plain dict"},
        {"deep": json.loads("[" * 100 + "1" + "]" * 100)},
        {"tool_calls": [{"id": "call_0", "name": "guess", "arguments": {"number": 25}}], "content": ""},
        ["a", ("tuple", 1)],
    ]

    async def main():
        env = await AsyncRemoteEnv.open(f"http://127.0.0.1:{port}/echo/wire-v0")
        try:
            await env.reset(seed=0)
            for action in actions:
                await env.step(action)
            await env.step({"content": None, "nan": math.nan})
        finally:
            await env.close()

    try:
        deadline = time.monotonic() + 30
        while not server.started and time.monotonic() < deadline:
            time.sleep(0.05)
        asyncio.run(main())
    finally:
        server.should_exit = True
        thread.join(30)
    seen = [json.loads(text) for text in importlib.import_module("wire_echo_env_for_tests").SEEN]
    assert seen[:4] == [json.loads(json.dumps(action)) for action in actions]
    assert seen[4]["content"] is None and seen[4]["nan"] == {"$float": "nan"}  # to_jsonable's NaN, as before


@pytest.mark.parametrize(
    "text",
    [
        '{"a": [1, 2.5, "x", null, true, false, {"b": {}}]}',
        '{"reward": NaN, "bounds": [Infinity, -Infinity]}',
        '{"big": 1180591620717411303424, "neg": -1180591620717411303424}',
        '"\\ud800 lone surrogate"',
        '{"k": 1, "k": 2}',
        "[1e400]",
        '{"deep": ' + "[" * 200 + "]" * 200 + "}",
    ],
)
def test_loads_reads_what_the_json_module_reads(text):
    """The wire's parser (orjson, then pydantic-core, then json) gives json.loads's values."""
    got, want = loads(text), json.loads(text)
    assert json.dumps(got) == json.dumps(want)


def test_loads_raises_the_json_modules_error_on_bad_json():
    with pytest.raises(json.JSONDecodeError):
        loads('{"op": "step",')

"""The env specs of rolloutgym-benchmarks, one function per namespace (issue 46).

``pyproject.toml`` declares each function as the namespace's entry point in group
``rolloutgym.envs`` (``rg = "rolloutgym_benchmarks.specs:rg"``), so a lookup of ``rg/...`` calls
:func:`rg` only. Each function imports its family's catalogue (plain tables and package facts:
``_rg_catalogue``, ``_mmath_catalogue``, ...), never an env module nor a benchmark's package, so
``rolloutgym list`` starts no simulator and imports no dataset library.
"""

from __future__ import annotations

from rolloutgym_protocol import EnvSpec

__all__ = ["agentdojo", "bench", "ifeval", "rg", "scienceworld", "tau2"]


def rg() -> list[EnvSpec]:
    """``rg/*-v0``: reasoning-gym's families and their mixture (tables only; reasoning_gym is not imported)."""
    from ._rg_catalogue import FAMILIES, INSTALL_HINT, PACKAGE, package_version

    version = package_version()
    source = f"source: {PACKAGE} {version}" if version else f"source: {PACKAGE} (not installed: {INSTALL_HINT})"
    return [_rg_spec(family, source) for family in (*FAMILIES, "mixture")]


def bench() -> list[EnvSpec]:
    """``bench/*-v0``: GSM8K, AIME and MMATH's English subsets."""
    return [*_mmath_specs(), *_math_specs()]


def agentdojo() -> list[EnvSpec]:
    """``agentdojo/*-v0``: AgentDojo's suites, plain and with injections (agentdojo is not imported)."""
    return _agentdojo_specs()


def ifeval() -> list[EnvSpec]:
    """``ifeval/instructions-v0`` (if-verifiable is not imported)."""
    return _ifeval_specs()


def scienceworld() -> list[EnvSpec]:
    """``scienceworld/*-v0``: one env per ScienceWorld task type (no JVM is started)."""
    return _scienceworld_specs()


def tau2() -> list[EnvSpec]:
    """``tau2/*-v0``: tau2-bench's domains (tau2 is not imported)."""
    return _tau2_specs()


def _rg_spec(family: str, source: str) -> EnvSpec:
    from ._rg_catalogue import EXCLUDED, LICENCE, family_generators

    names = family_generators(family)
    what = (
        f"every served reasoning-gym generator ({len(names)}; not {', '.join(sorted(EXCLUDED))})"
        if family == "mixture"
        else f"reasoning-gym's {family} generators ({len(names)}: {', '.join(names)})"
    )
    return EnvSpec(
        id=f"rg/{family}-v0",
        entry_point="rolloutgym_benchmarks.rg:make_env",
        tasks=f"rolloutgym_benchmarks.rg:tasks_{family}",
        description=(
            f"Procedural problems from {what}, round robin, seeded (seed= for fresh data). Single turn; the last "
            "<answer>...</answer> goes to the generator's own scorer; reward 1 only when it gives 1.0 "
            "(partial_credit=true: its score), hedges score 0. Components: correct, formatted, package_score. "
            "Options: generators, level (curriculum, 0 = easiest), config, seed, system_prompt, partial_credit. "
            f"Splits: train 10,000, test 1,000 task slots. {source}; licence {LICENCE}."
        ),
        tags=("benchmark", "reasoning-gym", "reasoning", "single-turn", "text", "procedural"),
        splits=("train", "test"),
        max_steps=1,
        kwargs={"family": family},
        replayable=True,
        forkable=True,
    )


def _ifeval_specs() -> list[EnvSpec]:
    from ._ifeval_catalogue import INSTALL_HINT, LICENCE, PACKAGE, package_version
    from ._ifeval_tasks import CHECKERS, NEEDS_NLTK_DATA, TOPICS

    version = package_version()
    size = len(TOPICS) * len(CHECKERS)
    source = f"source: {PACKAGE} {version}" if version else f"source: {PACKAGE} (not installed: {INSTALL_HINT})"
    return [
        EnvSpec(
            id="ifeval/instructions-v0",
            entry_point="rolloutgym_benchmarks.ifeval_envs:make_env",
            tasks="rolloutgym_benchmarks.ifeval_envs:tasks_all",
            description=(
                f"IFEval-style instruction following on rolloutgym's own prompts ({len(TOPICS)} writing requests x "
                f"{len(CHECKERS)} of the package's IFEval checkers = {size} tasks; not IFEval's prompts). Single "
                "turn; graded by if-verifiable's IFEval checkers: reward 1 when every instruction is followed "
                "(strict, prompt level). Components: strict, loose, instructions (fraction) and one per checker. "
                f"Not served: {', '.join(NEEDS_NLTK_DATA)} (need NLTK data). Splits: train 368, test 92. "
                f"{source}; licence {LICENCE}."
            ),
            tags=("benchmark", "ifeval", "instruction-following", "single-turn", "text"),
            splits=("train", "test"),
            max_steps=1,
            replayable=True,
            forkable=True,
        )
    ]


def _scienceworld_specs() -> list[EnvSpec]:
    from ._scienceworld_catalogue import CATALOGUE, INSTALL_HINT, LICENCE, PACKAGE, STEP_LIMIT, loader_name
    from ._scienceworld_catalogue import package_version as scienceworld_version

    version = scienceworld_version()
    source = f"source: {PACKAGE} {version}" if version else f"source: {PACKAGE} (not installed: {INSTALL_HINT})"
    specs = []
    for name, entry in CATALOGUE.items():
        sizes = {split: sum(stop - start for start, stop in entry[split]) for split in ("train", "dev", "test")}
        specs.append(
            EnvSpec(
                id=f"scienceworld/{name}-v0",
                entry_point="rolloutgym_benchmarks.scienceworld_envs:make_env",
                tasks=f"rolloutgym_benchmarks.scienceworld_envs:{loader_name(name)}",
                description=(
                    f"ScienceWorld task {entry['task_id']} ({entry['topic']}: {entry['task']}), {entry['variations']} "
                    f"variations. Multi-turn text: one simulator command per step; ends when the simulator completes "
                    f"or fails the task or after step_limit moves (default {STEP_LIMIT}); reward 1 when the "
                    "simulator's score is 100 (partial_credit=true: its final score / 100, negative: 0). "
                    "Components: score, completed. Needs Java 17. Splits: "
                    f"train {sizes['train']}, dev {sizes['dev']}, test {sizes['test']} (the package's). "
                    f"{source}; licence {LICENCE}."
                ),
                tags=("benchmark", "scienceworld", "multi-turn", "text", "simulator"),
                splits=("train", "dev", "test"),
                max_steps=2 * STEP_LIMIT,
                kwargs={"task_name": name},
                # A variation's world can differ between processes (the simulator's object
                # order): replaying recorded commands elsewhere need not reproduce the episode.
                replayable=False,
                fork_note="the world lives in ScienceWorld's Java simulator, which cannot copy a running game",
            )
        )
    return specs


def _mmath_specs() -> list[EnvSpec]:
    from ._mmath_catalogue import INSTALL_HINT as MMATH_HINT
    from ._mmath_catalogue import LICENCE as MMATH_LICENCE
    from ._mmath_catalogue import MMATH_SUBSETS
    from ._mmath_catalogue import PACKAGE as MMATH_PACKAGE
    from ._mmath_catalogue import package_version as mmath_version

    version = mmath_version()
    source = (
        f"source: {MMATH_PACKAGE} {version}" if version else f"source: {MMATH_PACKAGE} (not installed: {MMATH_HINT})"
    )
    return [
        EnvSpec(
            id=env_id,
            entry_point="rolloutgym_benchmarks.mmath_envs:make_env",
            tasks=f"rolloutgym_benchmarks.mmath_envs:tasks_{env_id[6:].removesuffix('-v0').replace('-', '_')}",
            description=(
                f"MMATH (English): {what}. Single turn, MMATH's prompt; graded as MMATH grades (the last \\boxed{{}} "
                "or final-answer number, math-verify against the reference); two different boxed answers score 0. "
                f"Components: correct, formatted. Split: test. {source}; licence {MMATH_LICENCE}."
            ),
            tags=("benchmark", "math", "mmath", "single-turn", "text"),
            splits=("test",),
            max_steps=1,
            kwargs={"env_id": env_id},
            replayable=True,
            forkable=True,
        )
        for env_id, (_, what) in MMATH_SUBSETS.items()
    ]


def _math_specs() -> list[EnvSpec]:
    return [
        EnvSpec(
            id="bench/gsm8k-v0",
            entry_point="rolloutgym_benchmarks.benchmarks:make_gsm8k_env",
            tasks="rolloutgym_benchmarks.benchmarks:gsm8k_tasks",
            description=(
                "GSM8K grade-school math word problems. Single-turn text answer; reward 1 when the final "
                "answer ('#### N', \\boxed{}, 'the answer is', bold or the last number) equals the reference "
                "exactly as a rational number. Components: correct, formatted. Ships 30 sample problems; "
                "set ROLLOUTGYM_BENCH_GSM8K to a local copy of openai/gsm8k (or 'hub') for the full set."
            ),
            tags=("benchmark", "math", "single-turn", "text"),
            splits=("train", "test"),
            max_steps=1,
            replayable=True,
            forkable=True,
        ),
        EnvSpec(
            id="bench/aime-v0",
            entry_point="rolloutgym_benchmarks.benchmarks:make_aime_env",
            tasks="rolloutgym_benchmarks.benchmarks:aime_tasks",
            description=(
                "AIME competition problems. Single-turn text answer; reward 1 when the final answer is the "
                "reference integer (0-999), best given in \\boxed{}. Components: correct, formatted. Ships "
                "17 sample problems; set ROLLOUTGYM_BENCH_AIME to a local copy of MathArena/aime_2025 "
                "(or 'hub') for the real set."
            ),
            tags=("benchmark", "math", "single-turn", "text"),
            splits=("train", "test"),
            max_steps=1,
            replayable=True,
            forkable=True,
        ),
    ]


def _agentdojo_specs() -> list[EnvSpec]:
    from ._agentdojo_catalogue import BENCHMARK_VERSION, LICENCE, MAX_TOOL_REPLIES, PACKAGE, SUITES
    from ._agentdojo_catalogue import install_hint as agentdojo_hint
    from ._agentdojo_catalogue import package_version as agentdojo_version

    version = agentdojo_version()
    source = f"source: {PACKAGE} {version}" if version else f"source: {PACKAGE} (not installed: {agentdojo_hint()})"
    specs = []
    for suite, (users, injections) in SUITES.items():
        for injection in (False, True):
            size = (
                f"{users} x {injections} = {users * injections} user/injection task pairs"
                if injection
                else (f"{users} user tasks")
            )
            graded = (
                "Components: utility (AgentDojo's utility check), security (1 when its security check says the "
                "planted injection task did not succeed); reward = utility"
                if injection
                else "Reward 1 when AgentDojo's utility check passes"
            )
            specs.append(
                EnvSpec(
                    id=f"agentdojo/{suite}{'-injection' if injection else ''}-v0",
                    entry_point="rolloutgym_benchmarks.agentdojo_envs:make_env",
                    tasks=f"rolloutgym_benchmarks.agentdojo_envs:tasks_{suite}{'_injection' if injection else ''}",
                    description=(
                        f"AgentDojo {BENCHMARK_VERSION} {suite} suite ({size}): tool calls run on the suite's "
                        f"environment with AgentDojo's functions runtime; a reply without tool calls is the answer "
                        f"(at most {MAX_TOOL_REPLIES} tool-calling replies). {graded}. Split: test. {source}; "
                        f"licence {LICENCE}."
                    ),
                    tags=("benchmark", "agentdojo", "tool-use", "multi-turn", "chat", "prompt-injection")
                    if injection
                    else ("benchmark", "agentdojo", "tool-use", "multi-turn", "chat"),
                    splits=("test",),
                    max_steps=MAX_TOOL_REPLIES + 1,
                    kwargs={"suite": suite, "injection": injection},
                    replayable=True,
                    fork_note=(
                        "the suite's environment is AgentDojo's runtime objects, which have no data form to store; "
                        "not forkable yet (replay the actions on a fresh env instead: the env is replayable)"
                    ),
                )
            )
    return specs


def _tau2_specs() -> list[EnvSpec]:
    from .tau2_tasks import DOMAINS, LICENCE, MAX_REPLIES, PACKAGE, install_hint, loader_name
    from .tau2_tasks import package_version as tau2_version

    version = tau2_version()
    source = f"source: {PACKAGE} {version}" if version else f"source: {PACKAGE} (not installed: {install_hint()})"
    specs = []
    for name, (domain, task_set, sizes) in DOMAINS.items():
        splits = ", ".join(f"{split} {size:,}" for split, size in sizes.items())
        telecom = domain == "telecom"
        specs.append(
            EnvSpec(
                id=f"tau2/{name}-v0",
                entry_point="rolloutgym_benchmarks.tau2_envs:make_env",
                tasks=f"rolloutgym_benchmarks.tau2_tasks:{loader_name(name)}",
                description=(
                    f"tau2-bench {domain} ({task_set} task set, {sum(sizes.values()):,} tasks): conversational "
                    "tool use under the domain's policy, with a simulated user from the task's scenario (scripted; "
                    + (
                        "it runs the phone actions the agent names as name(...)"
                        if telecom
                        else "user_policy=P:M for a model"
                    )
                    + f"). Graded by tau2's own evaluator (DB, env assertions, actions, communicate checks over the "
                    f"task's reward basis); at most {MAX_REPLIES} agent replies (max_replies=N). Tasks graded by "
                    f"natural-language assertions (none in 26.3) are left out. Splits: {splits} (the package's). "
                    f"{source}; licence {LICENCE}."
                ),
                tags=("benchmark", "tau2", "tool-use", "multi-turn", "chat", "conversational"),
                splits=tuple(sizes),
                max_steps=MAX_REPLIES + 1,
                kwargs={"env_name": name},
                replayable=True,
                fork_note=(
                    "tau2's environment and user simulator are the package's runtime objects; not forkable yet "
                    "(replay the actions on a fresh env instead: the env is replayable)"
                ),
            )
        )
    return specs

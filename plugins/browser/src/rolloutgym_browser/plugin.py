"""Hook implementations of rolloutgym-browser (imports nothing heavy)."""

from __future__ import annotations

from rolloutgym_protocol import EnvSpec, TemplateSpec, hookimpl


@hookimpl
def rolloutgym_envs() -> list[EnvSpec]:
    return [
        EnvSpec(
            id="browser/shop-v0",
            entry_point="rolloutgym_browser.shop:make_shop_env",
            tasks="rolloutgym_browser.shop:shop_tasks",
            description=(
                "Use a small local web shop (search, product pages, cart, checkout, account settings, "
                "support form) through browser tools: click, type, select, check, goto, back, scroll, answer. "
                "Tasks range from filling one form to multi-page purchases and information lookups; graded on "
                "the site's server-side state and the answer. Backends: dom (default, pure Python) and "
                "chromium (--backend chromium)."
            ),
            tags=("browser", "multi-turn", "tools", "web"),
            splits=("train", "dev", "test"),
            max_steps=40,
            replayable=True,
            forkable=True,
            fork_note=(
                "dom: the site's state and the page as shown are copied; chromium: the site's state is copied and "
                "the page reopened in a fresh context with its form values typed back (page scripts' own state and "
                "the scroll position are not copied)"
            ),
        ),
        EnvSpec(
            id="browser/miniwob-v0",
            entry_point="rolloutgym_browser.miniwob:make_miniwob_env",
            tasks="rolloutgym_browser.miniwob:miniwob_tasks",
            description=(
                "MiniWoB++: the 125 web-interaction tasks of the PyPI package miniwob 1.1.0 (source: "
                "miniwob==1.1.0, its html/miniwob/*.html pages), one task per page; the seed picks the episode, the "
                "page's own JavaScript writes the instruction and computes the reward (raw reward, -1 to 1; "
                "giving up scores -1). Same tools as browser/shop-v0 plus click_at, drag and press_key. "
                "Chromium only; needs the miniwob extra of rolloutgym-browser."
            ),
            tags=("browser", "multi-turn", "tools", "web", "benchmark", "miniwob"),
            splits=("test",),
            max_steps=30,
            fork_note=(
                "the page and its JavaScript state live in Chromium, which cannot copy a running page; replaying "
                "the recorded actions with the same seed on a fresh env reaches the same page"
            ),
        ),
    ]


@hookimpl
def rolloutgym_templates() -> list[TemplateSpec]:
    return [
        TemplateSpec(
            name="browser",
            entry_point="rolloutgym_browser.template:compile_browser",
            description="Pages with elements and an initial URL, served locally; dom or chromium backend.",
            validator="rolloutgym_browser._shapes:validate_browser",
        )
    ]

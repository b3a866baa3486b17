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
        ),
    ]


@hookimpl
def rolloutgym_templates() -> list[TemplateSpec]:
    return [
        TemplateSpec(
            name="browser",
            entry_point="rolloutgym_browser.template:compile_browser",
            description="Pages with elements and an initial URL, served locally; dom or chromium backend.",
        )
    ]

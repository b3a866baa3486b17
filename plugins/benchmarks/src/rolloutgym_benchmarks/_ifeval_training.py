"""The training reward of ``ifeval/instructions-v0``: IFEval's verdict, and the reply is about its request.

IFEval checks form, not content: one fixed reply unrelated to any request (a lowercase text
with no commas, a title, two paragraphs...) passes every task whose checker that form meets,
112 of 460 in the review of issue 50. The benchmark's score stays IFEval's (``reward="benchmark"``,
the default, as published). ``reward="training"`` also asks that the reply be about its own
request: it must use more of its topic's words (:data:`TOPIC_WORDS`, whole words) than of any
other topic's. A fixed reply is about one topic at most, so it can pass the tasks of that topic
only (23 of 460 at most, fewer where its form does not fit), not the others'.

Two checkers are *untrainable* under this reward, and score 0 there with the reason: a reply in
another language (``language:response_language``) cannot be read for English topic words, and
``detectable_format:constrained_response`` asks for nothing but one of three fixed answers, which
a constant reply gives for every task.
"""

from __future__ import annotations

import functools
import re

__all__ = ["TOPIC_WORDS", "UNTRAINABLE", "on_topic"]

# Per topic of data/ifeval_topics.json, in order: words a reply about that request uses
# (regular expressions matched as whole words, case-insensitively), none shared between topics.
TOPIC_WORDS: tuple[tuple[str, ...], ...] = (
    ("cats?", "pepper", "neighbou?rs?", "grey", "gray", "lost", "missing"),
    ("tea", "brew\\w*", "kettle", "steep\\w*", "boil\\w*", "teapot"),
    ("sky", "blue", "scatter\\w*", "atmosphere", "molecules?", "rayleigh", "sunlight", "colou?rs?"),
    ("bottles?", "reusable", "steel", "litres?", "liters?", "lid", "drinks?"),
    ("run", "runs", "running", "runners?", "jog\\w*", "walking", "pace"),
    ("lighthouse", "keepers?", "sailors?", "reef", "boats?", "island"),
    ("teachers?", "class", "classroom", "school", "lessons?", "taught"),
    ("village", "mountains?", "mist", "valley", "quiet", "bakery", "peaks?"),
    ("bicycles?", "bikes?", "gears?", "pedals?", "riders?", "wheels?", "cycling"),
    ("garden", "clean-up", "cleanup", "community", "invit\\w*", "weed\\w*", "tidy", "volunteers?"),
    ("bed", "bedtime", "sleep", "sleepy", "asleep", "night", "calm\\w*", "screens?", "rested", "relax\\w*"),
    ("pizza\\w*", "crust", "review", "oven", "slices?", "toppings?"),
    ("bees?", "pollen", "pollinat\\w*", "flowers?", "nectar", "fruits?", "hive"),
    ("houseplants?", "plants?", "soil", "potted", "repot\\w*", "indoor", "indirect", "humidity", "fertili[sz]\\w*"),
    ("meetings?", "agenda", "team", "attendees", "discussion"),
    ("chess", "club", "members?", "openings?", "tournaments?"),
    ("rainbows?", "storm", "raindrops?", "drops?", "refract\\w*", "prism", "arc"),
    ("camping", "camp", "tents?", "pack\\w*", "waterproof", "stove", "torch", "flashlight", "trip"),
    ("librarians?", "library", "libraries", "shelves", "borrow\\w*", "public", "collections?", "visitors?", "books?"),
    ("science", "fair", "experiments?", "scientists?", "students?", "projects?"),
)

UNTRAINABLE: dict[str, str] = {
    "language:response_language": "a reply in another language cannot be checked for the request's topic here",
    "detectable_format:constrained_response": "the request asks only for one of three fixed answers, which a "
    "constant reply gives for every task",
}


@functools.cache
def _patterns() -> tuple[re.Pattern[str], ...]:
    return tuple(re.compile(r"(?<![\w-])(?:" + "|".join(words) + r")(?![\w-])", re.IGNORECASE) for words in TOPIC_WORDS)


def _hits(pattern: re.Pattern[str], text: str) -> int:
    return len({match.group(0).lower() for match in pattern.finditer(text)})


def on_topic(topic: int, reply: str) -> tuple[bool, str]:
    """``(passed, why)``: the reply uses more distinct words of topic ``topic`` than of any other."""
    counts = [_hits(pattern, reply) for pattern in _patterns()]
    own = counts[topic]
    rival = max(count for index, count in enumerate(counts) if index != topic)
    if own == 0:
        return False, "the reply is not about the request (none of its topic's words)"
    if own <= rival:
        return False, "the reply is as much about another request as about its own"
    return True, f"the reply is about the request ({own} of its topic's words)"

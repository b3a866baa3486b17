"""rolloutgym's own IFEval-style task set: our writing requests x the checkers of ``if-verifiable``.

Nothing here imports if-verifiable (listing reads these tables only). Each task pairs one of
our requests (``data/ifeval_topics.json``) with one checker of the package's IFEval registry and
its arguments, drawn with a seeded RNG from the task's index; the instruction sentence is our
wording. Each builder also writes the oracle's reply (which must pass the package's checker)
and a near miss (which must fail it); both come from the topic's reply text.

Checkers whose answers are easy to stuff (a bare keyword list, a lone title) also carry the
package's ``length_constraints:number_words`` check at 15 words or more, which they do not
conflict with in the package's ``INSTRUCTION_CONFLICTS``.
"""

from __future__ import annotations

import json
import random
import re
from collections.abc import Callable
from dataclasses import dataclass
from importlib import resources
from typing import Any

__all__ = ["CHECKERS", "FLOORED", "NEEDS_NLTK_DATA", "Built", "build"]

_DATA = json.loads(resources.files(__package__).joinpath("data/ifeval_topics.json").read_text(encoding="utf-8"))
TOPICS: list[dict[str, str]] = _DATA["topics"]
LANGUAGES: dict[str, str] = _DATA["languages"]
TEST_TOPICS = range(16, 20)
WORDS = ("harbour", "violet", "lantern", "meadow", "copper", "whistle", "orbit", "velvet", "pebble", "saffron")
LANGUAGE_NAMES = {"es": "Spanish", "fr": "French", "de": "German", "it": "Italian", "pt": "Portuguese"}
FLOOR_WORDS = 15
WORD_FLOOR = "length_constraints:number_words"

# The package's IFEval checkers that need NLTK data (punkt_tab), which no PyPI package ships:
# not served.
NEEDS_NLTK_DATA: dict[str, str] = {
    "length_constraints:number_sentences": "counts sentences with NLTK's punkt tokenizer (punkt_tab data)",
    "change_case:capital_word_frequency": "splits words with nltk.word_tokenize (punkt_tab data)",
}


@dataclass(frozen=True)
class Built:
    """One checker's part of a task: its arguments, our instruction, the oracle's reply and a near miss."""

    kwargs: dict[str, Any]
    instruction: str
    oracle: str
    near_miss: str


def _sentences(text: str) -> list[str]:
    return re.findall(r"[^.]+\.", text)


def _unused(rng: random.Random, text: str, count: int) -> list[str]:
    return rng.sample([word for word in WORDS if word not in text.lower()], count)


def _existence(rng: random.Random, topic: dict[str, str]) -> Built:
    words = _unused(rng, topic["text"], 2)
    text = topic["text"]
    return Built(
        {"keywords": words},
        f"Include the words {words[0]} and {words[1]} in your reply.",
        f"{text} It made me think of a {words[0]} and of {words[1]}.",
        f"{text} It made me think of a {words[0]}.",
    )


def _frequency(rng: random.Random, topic: dict[str, str]) -> Built:
    word, times, text = _unused(rng, topic["text"], 1)[0], rng.randint(2, 4), topic["text"]
    if rng.random() < 0.5:
        return Built(
            {"keyword": word, "frequency": times, "relation": "at least"},
            f"Use the word {word} at least {times} times.",
            f"{text} " + " ".join(f"Think of the {word}." for _ in range(times)),
            f"{text} " + " ".join(f"Think of the {word}." for _ in range(times - 1)),
        )
    return Built(
        {"keyword": word, "frequency": times, "relation": "less than"},
        f"Use the word {word} fewer than {times} times.",
        f"{text} Think of the {word}.",
        f"{text} " + " ".join(f"Think of the {word}." for _ in range(times)),
    )


def _forbidden(rng: random.Random, topic: dict[str, str]) -> Built:
    words = _unused(rng, topic["text"], 2)
    return Built(
        {"forbidden_words": words},
        f"Do not use the words {words[0]} or {words[1]}.",
        topic["text"],
        f"{topic['text']} Also the {words[1]}.",
    )


def _letter(rng: random.Random, topic: dict[str, str]) -> Built:
    text = topic["text"]
    letter = rng.choice("zqxj")
    count = text.lower().count(letter)
    if rng.random() < 0.5:
        times = count + rng.randint(2, 4)
        extra = " ".join([f"({letter})"] * (times - count))
        missing = " ".join([f"({letter})"] * (times - count - 1))
        return Built(
            {"letter": letter, "let_frequency": times, "let_relation": "at least"},
            f"The letter {letter} must appear at least {times} times.",
            f"{text} {extra}",
            f"{text} {missing}",
        )
    times = count + rng.randint(1, 3)
    return Built(
        {"letter": letter, "let_frequency": times, "let_relation": "less than"},
        f"The letter {letter} must appear fewer than {times} times.",
        text,
        f"{text} " + " ".join([f"({letter})"] * times),
    )


def _language(rng: random.Random, topic: dict[str, str]) -> Built:
    code = rng.choice(sorted(LANGUAGES))
    return Built(
        {"language": code},
        f"Your whole reply must be in {LANGUAGE_NAMES[code]}, and no other language.",
        LANGUAGES[code],
        topic["text"],
    )


def _paragraphs(rng: random.Random, topic: dict[str, str]) -> Built:
    sentences, count = _sentences(topic["text"]), rng.randint(2, 3)
    groups = [" ".join(sentences[:-1]), sentences[-1]] if count == 2 else sentences
    return Built(
        {"num_paragraphs": count},
        f"Write exactly {count} paragraphs, separated from each other by the markdown divider ***.",
        "\n***\n".join(part.strip() for part in groups),
        "\n\n".join(part.strip() for part in groups),
    )


def _words(rng: random.Random, topic: dict[str, str]) -> Built:
    text, first = topic["text"], _sentences(topic["text"])[0].strip()
    total, short = len(re.findall(r"\w+", text)), len(re.findall(r"\w+", first))
    if rng.random() < 0.5:
        return Built(
            {"num_words": total - 3, "relation": "at least"},
            f"Answer with at least {total - 3} words.",
            text,
            first,
        )
    return Built(
        {"num_words": short + 2, "relation": "less than"}, f"Answer in fewer than {short + 2} words.", first, text
    )


def _first_word(rng: random.Random, topic: dict[str, str]) -> Built:
    sentences = [sentence.strip() for sentence in _sentences(topic["text"])]
    nth, word = rng.randint(1, 3), rng.choice(WORDS)
    paragraphs = [f"{word.capitalize()} {s[0].lower()}{s[1:]}" if i == nth - 1 else s for i, s in enumerate(sentences)]
    return Built(
        {"num_paragraphs": 3, "nth_paragraph": nth, "first_word": word},
        f"Write exactly 3 paragraphs separated by blank lines; paragraph {nth} must start with the word {word}.",
        "\n\n".join(paragraphs),
        "\n\n".join(sentences),
    )


def _placeholders(rng: random.Random, topic: dict[str, str]) -> Built:
    count = rng.randint(1, 3)
    slots = ["[name]", "[address]", "[date]"]
    return Built(
        {"num_placeholders": count},
        f"Include at least {count} placeholders in square brackets, such as [name].",
        f"{topic['text']} Signed {' '.join(slots[:count])}.",
        f"{topic['text']} Signed {' '.join(slots[: count - 1])}.",
    )


def _postscript(rng: random.Random, topic: dict[str, str]) -> Built:
    marker = rng.choice(("P.S.", "P.P.S"))
    return Built(
        {"postscript_marker": marker},
        f"End your reply with a postscript starting with {marker}",
        f"{topic['text']}\n\n{marker} See you soon.",
        f"{topic['text']}\n\nSee you soon.",
    )


def _bullets(rng: random.Random, topic: dict[str, str]) -> Built:
    sentences, count = [s.strip() for s in _sentences(topic["text"])], rng.randint(2, 3)
    return Built(
        {"num_bullets": count},
        f"Your reply must be exactly {count} markdown bullet points, each starting with '* '.",
        "\n".join(f"* {sentence}" for sentence in sentences[:count]),
        "\n".join(f"* {sentence}" for sentence in sentences[: count - 1]),
    )


def _constrained(rng: random.Random, topic: dict[str, str]) -> Built:
    choice = rng.choice(("My answer is yes.", "My answer is no.", "My answer is maybe."))
    return Built(
        {},
        "Answer with one of: 'My answer is yes.', 'My answer is no.', 'My answer is maybe.'",
        choice,
        choice.removesuffix(".").replace("My answer is", "I would say"),
    )


def _highlights(rng: random.Random, topic: dict[str, str]) -> Built:
    sentences, count = [s.strip() for s in _sentences(topic["text"])], rng.randint(1, 3)
    marked = [f"*{s}*" if index < count else s for index, s in enumerate(sentences)]
    missed = [f"*{s}*" if index < count - 1 else s for index, s in enumerate(sentences)]
    return Built(
        {"num_highlights": count},
        f"Highlight at least {count} sections with markdown, i.e. *highlighted section*.",
        " ".join(marked),
        " ".join(missed),
    )


def _sections(rng: random.Random, topic: dict[str, str]) -> Built:
    splitter, count = rng.choice(("Section", "SECTION")), rng.randint(2, 3)
    sentences = [s.strip() for s in _sentences(topic["text"])]
    return Built(
        {"section_spliter": splitter, "num_sections": count},
        f"Your reply must have {count} sections; mark the start of each with {splitter} X (X its number).",
        "\n".join(f"{splitter} {index + 1}\n{sentences[index]}" for index in range(count)),
        "\n".join(f"Part {index + 1}\n{sentences[index]}" for index in range(count)),
    )


def _json(rng: random.Random, topic: dict[str, str]) -> Built:
    return Built(
        {},
        "Wrap your entire reply in JSON format; you may use markdown ticks such as ```.",
        "```json\n" + json.dumps({"title": topic["title"], "text": topic["text"]}) + "\n```",
        "Here it is: " + json.dumps({"title": topic["title"], "text": topic["text"]}),
    )


def _title(rng: random.Random, topic: dict[str, str]) -> Built:
    return Built(
        {},
        "Give your reply a title wrapped in double angular brackets, such as <<poem of joy>>.",
        f"<<{topic['title']}>>\n{topic['text']}",
        f"{topic['title'].title()}\n{topic['text']}",
    )


def _two(rng: random.Random, topic: dict[str, str]) -> Built:
    sentences = [s.strip() for s in _sentences(topic["text"])]
    return Built(
        {},
        "Give two different replies, separated by six asterisks: ******. Nothing else may be separated that way.",
        f"{topic['text']}\n******\n{sentences[0]}",
        f"{topic['text']}\n******\n{topic['text']}",
    )


def _repeat(rng: random.Random, topic: dict[str, str]) -> Built:
    request = topic["request"]
    return Built(
        {"prompt_to_repeat": request},
        "First repeat the request above word for word without change, then give your answer "
        "(say nothing before repeating it, and do not repeat this sentence).",
        f"{request}\n{topic['text']}",
        f"Sure. {request}\n{topic['text']}",
    )


def _end(rng: random.Random, topic: dict[str, str]) -> Built:
    phrase = rng.choice(("Any other questions?", "Is there anything else I can help with?"))
    return Built(
        {"end_phrase": phrase},
        f"Finish your reply with this exact phrase: {phrase} No other words may follow it.",
        f"{topic['text']} {phrase}",
        f"{topic['text']} {phrase} Thanks.",
    )


def _capital(rng: random.Random, topic: dict[str, str]) -> Built:
    return Built(
        {}, "Your entire reply must be in English and in capital letters only.", topic["text"].upper(), topic["text"]
    )


def _lowercase(rng: random.Random, topic: dict[str, str]) -> Built:
    return Built(
        {},
        "Your entire reply must be in English and in lowercase letters only; no capital letters.",
        topic["text"].lower(),
        topic["text"],
    )


def _no_comma(rng: random.Random, topic: dict[str, str]) -> Built:
    first, *rest = _sentences(topic["text"])
    return Built(
        {},
        "Do not use any commas in your reply.",
        topic["text"],
        first.removesuffix(".") + ", really." + "".join(rest),
    )


def _quotation(rng: random.Random, topic: dict[str, str]) -> Built:
    return Built({}, "Wrap your entire reply in double quotation marks.", f'"{topic["text"]}"', f'"{topic["text"]}')


# checker id (the package's IFEval registry) -> builder, in the registry's order.
CHECKERS: dict[str, Callable[[random.Random, dict[str, str]], Built]] = {
    "keywords:existence": _existence,
    "keywords:frequency": _frequency,
    "keywords:forbidden_words": _forbidden,
    "keywords:letter_frequency": _letter,
    "language:response_language": _language,
    "length_constraints:number_paragraphs": _paragraphs,
    "length_constraints:number_words": _words,
    "length_constraints:nth_paragraph_first_word": _first_word,
    "detectable_content:number_placeholders": _placeholders,
    "detectable_content:postscript": _postscript,
    "detectable_format:number_bullet_lists": _bullets,
    "detectable_format:constrained_response": _constrained,
    "detectable_format:number_highlighted_sections": _highlights,
    "detectable_format:multiple_sections": _sections,
    "detectable_format:json_format": _json,
    "detectable_format:title": _title,
    "combination:two_responses": _two,
    "combination:repeat_prompt": _repeat,
    "startend:end_checker": _end,
    "change_case:english_capital": _capital,
    "change_case:english_lowercase": _lowercase,
    "punctuation:no_comma": _no_comma,
    "startend:quotation": _quotation,
}
# Checkers that also get the 15-word floor (stuffable replies).
FLOORED = frozenset(
    {
        "keywords:existence",
        "keywords:letter_frequency",
        "detectable_content:number_placeholders",
        "detectable_format:title",
        "startend:end_checker",
    }
)


def build(index: int) -> tuple[int, str, Built]:
    """Task ``index``'s topic number, checker id and built part (deterministic in ``index``)."""
    names = list(CHECKERS)
    topic_number, checker = divmod(index, len(names))
    name = names[checker]
    return topic_number, name, CHECKERS[name](random.Random(f"ifeval-{index}"), TOPICS[topic_number])

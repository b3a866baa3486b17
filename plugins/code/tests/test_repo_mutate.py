"""The candidate-bug operators of ``rolloutgym tasks make-repo`` (issue 43): each changes only
its site's text, every candidate parses, and equivalent programs share a normalised hash."""

from __future__ import annotations

import ast
from collections import Counter

from rolloutgym_code.repotasks import OPERATORS, apply_mutation, find_mutations, normalised_hash

SOURCE = '''"""A module."""

LIMIT = 10  # module level: never mutated


def clamp(value, low, high):
    """Docstring: never mutated."""
    if value < low:  # keep this comment
        return low
    if value > high:
        return high
    return value


def total(items, start=0):
    result = start
    for item in items:
        result = result + item
    return result


def describe(flag, size):
    if flag and size >= 2:
        label = "big"
    else:
        label = "small"
    return "%s-%s" % (label, size - 1)


class Box:
    @staticmethod
    def fits(width, height):
        return divmod(width, height)[1] == 0 or False
'''


def _changed(mutation) -> tuple[str, str]:
    new = apply_mutation(SOURCE, mutation)
    old_lines, new_lines = SOURCE.splitlines(), new.splitlines()
    removed = [line for line in old_lines if line not in new_lines]
    added = [line for line in new_lines if line not in old_lines]
    return "\n".join(removed).strip(), "\n".join(added).strip()


def test_every_operator_finds_sites_and_every_candidate_parses():
    mutations = find_mutations(SOURCE)
    counts = Counter(mutation.operator for mutation in mutations)
    assert set(counts) == set(OPERATORS), counts
    for mutation in mutations:
        ast.parse(apply_mutation(SOURCE, mutation))  # a candidate is always a program
        assert mutation.function in {"clamp", "total", "describe", "Box.fits"}
        assert "LIMIT = 10" in apply_mutation(SOURCE, mutation)
        assert '"""Docstring: never mutated."""' in apply_mutation(SOURCE, mutation)


def test_a_change_touches_only_its_site():
    by_operator = {}
    for mutation in find_mutations(SOURCE):
        by_operator.setdefault(mutation.operator, []).append(_changed(mutation))
    assert ("if value < low:  # keep this comment", "if value <= low:  # keep this comment") in by_operator["cmp_flip"]
    assert ("result = result + item", "result = result - item") in by_operator["op_change"]
    assert ("if flag and size >= 2:", "if flag or size >= 2:") in by_operator["bool_op"]
    assert ("return divmod(width, height)[1] == 0 or False", "return divmod(height, width)[1] == 0 or False") in (
        by_operator["swap_args"]
    )
    assert ('return "%s-%s" % (label, size - 1)', 'return "%s-%s" % (label, 1 - size)') in by_operator["op_swap"]
    assert ('return "%s-%s" % (label, size - 1)', 'return "%s-%s" % (label, size - 2)') in by_operator["off_by_one"]
    assert ("result = start", "") in by_operator["remove_assign"]
    removed_loop = [change for change in by_operator["remove_loop"] if change[0].startswith("for item")]
    assert removed_loop and removed_loop[0][1] == ""


def test_invert_if_swaps_the_bodies_and_keeps_the_condition():
    (mutation,) = [m for m in find_mutations(SOURCE) if m.operator == "invert_if"]
    new = apply_mutation(SOURCE, mutation)
    assert 'if flag and size >= 2:\n        label = "small"\n    else:\n        label = "big"' in new


def test_function_line_is_the_code_objects_first_line():
    namespace: dict = {}
    exec(compile(SOURCE, "m.py", "exec"), namespace)  # noqa: S102 - our own fixed source
    first_lines = {
        "clamp": namespace["clamp"].__code__.co_firstlineno,
        "Box.fits": namespace["Box"].fits.__code__.co_firstlineno,
    }
    for mutation in find_mutations(SOURCE):
        if mutation.function in first_lines:
            assert mutation.function_line == first_lines[mutation.function]


def test_equivalent_programs_share_a_hash_and_others_do_not():
    spaced = SOURCE.replace("result = result + item", "result = (result+item)  # same program")
    assert normalised_hash(spaced) == normalised_hash(SOURCE)
    hashes = {normalised_hash(apply_mutation(SOURCE, mutation)) for mutation in find_mutations(SOURCE)}
    assert normalised_hash(SOURCE) not in hashes  # every candidate changes the program
    assert len(hashes) > len(OPERATORS)
    assert normalised_hash("def (:") is None

import random
from collections import OrderedDict

from cache import LRUCache


def test_read_protects_from_eviction():
    cache = LRUCache(2)
    cache.put("a", 1)
    cache.put("b", 2)
    assert cache.get("a") == 1
    cache.put("c", 3)
    assert "a" in cache and "c" in cache and "b" not in cache


def test_update_counts_as_use():
    cache = LRUCache(2)
    cache.put("a", 1)
    cache.put("b", 2)
    cache.put("a", 10)
    cache.put("c", 3)
    assert cache.get("a") == 10 and "b" not in cache


def test_missing_get_does_not_insert():
    cache = LRUCache(1)
    assert cache.get("x") is None and len(cache) == 0


def test_matches_a_reference_model():
    """Random puts and gets against an OrderedDict kept here: every answer of get, in and len
    is compared with the model's (membership alone could be scripted to agree)."""
    generator = random.Random(11)
    for _ in range(40):
        capacity = generator.randint(1, 4)
        cache, model = LRUCache(capacity), OrderedDict()
        for step in range(30):
            key = generator.choice("abcdef")
            if generator.random() < 0.5:
                cache.put(key, step)
                model[key] = step
                model.move_to_end(key)
                while len(model) > capacity:
                    model.popitem(last=False)
            else:
                expected = model.get(key)
                if key in model:
                    model.move_to_end(key)
                assert cache.get(key) == expected
            assert len(cache) == len(model)
            assert [key in cache for key in "abcdef"] == [key in model for key in "abcdef"]

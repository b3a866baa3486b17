"""Conversational workflow tasks: the scripted user, the respond_to_user protocol and refund-conv-v0."""

from __future__ import annotations

import json
from typing import Any

import pytest
from rolloutgym.registry import get_registry
from rolloutgym.rollouts import rollout
from rolloutgym_protocol.errors import ConfigError, EnvFileError
from rolloutgym_workflow.scripted_user import ScriptedUser
from rolloutgym_workflow.user import parse_user_section

FACTS = {
    "name": "Alice Moreau",
    "email": "alice.moreau@example.com",
    "order_id": "O-5001",
    "item": "Trail Running Shoe",
    "address": {"street": "12 Birch Way", "city": "Portland", "zip": "97201"},
    "amount": 42.5,
    "variant": {"size": "10", "color": "black"},
    "reason": "It arrived scratched.",
}

# 20 phrasings of each question an agent asks; the expected fact must appear in the answer.
PARAPHRASES: dict[str, list[str]] = {
    "email": [
        "Could you tell me the email address on your account?",
        "What's your email?",
        "What is the e-mail you registered with?",
        "Please share the email associated with your account.",
        "To verify your identity, I need your email address.",
        "Can I have your email, please?",
        "Which email do you use with us?",
        "May I ask for your e-mail address?",
        "First, please provide your email so I can look you up.",
        "I'll need your account email to continue.",
        "Let me know the email on file, please.",
        "Could you confirm your email address?",
        "What email address is your account under?",
        "Before anything else, what's the email for your account?",
        "Please tell me your email.",
        "I need to verify your account. What email did you sign up with?",
        "Kindly send me your email address.",
        "Can you give me the email you used for the purchase?",
        "What's the best email to find your account?",
        "Sure! What is your email address?",
    ],
    "order_id": [
        "Which order is this about?",
        "What is the order number?",
        "Could you share the order ID?",
        "Please give me the order number.",
        "What's the order id?",
        "Can you tell me which order you mean?",
        "Which order would you like me to look at?",
        "May I have the order number, please?",
        "I need the order number to continue.",
        "Let me know the order ID, please.",
        "What order are you referring to?",
        "Could you provide the order reference?",
        "Which order do you want refunded?",
        "Please tell me the order number of the purchase.",
        "What's the order # ?",
        "Can you give me the order number?",
        "Kindly share the order id.",
        "What is the ID of the order?",
        "Which of your orders is it?",
        "Great, and what's the order number?",
    ],
    "address": [
        "What is the new shipping address?",
        "Where should we ship it instead?",
        "Please give me the new address.",
        "What's the new delivery address?",
        "Which address should I use?",
        "Could you tell me the new shipping address?",
        "Where would you like it delivered?",
        "Can you share the new mailing address?",
        "What address should the order go to?",
        "Please provide the full new address.",
        "I need the new address, please.",
        "Let me know the new shipping address.",
        "Where do you want us to send it?",
        "What is your new address?",
        "Which delivery address should I put on the order?",
        "Kindly share the new shipping address.",
        "What's the address it should ship to now?",
        "Could you provide your new delivery address?",
        "To update it, what's the new address?",
        "Sure, what address would you like?",
    ],
    "item": [
        "Which item would you like to return?",
        "What item is it?",
        "Which product are you returning?",
        "Which one of the items?",
        "Which item from that order would you like refunded?",
        "Could you tell me which item it is?",
        "What product would you like to send back?",
        "Please tell me which item you mean.",
        "Which of the items should I refund?",
        "What did you order that you want to return?",
        "Can you say which product?",
        "Which item is the problem?",
        "Let me know which item, please.",
        "What item would you like refunded?",
        "Which product is it?",
        "Which one would you like to return?",
        "Kindly tell me which item.",
        "What item are we talking about?",
        "Which item do you want to keep out?",
        "Okay, which item?",
    ],
    "amount": [
        "How much would you like refunded?",
        "What amount should I refund?",
        "How much are you asking for?",
        "Which amount did you have in mind?",
        "Please tell me the amount.",
        "Could you confirm the amount you want back?",
        "How much money do you want back?",
        "What amount are you requesting?",
        "Let me know the amount, please.",
        "How much should the refund be?",
        "What's the amount you'd like?",
        "Can you tell me how much?",
        "I need the amount you want refunded.",
        "Kindly share the amount.",
        "How much do you expect?",
        "What sum would you like refunded?",
        "Please provide the amount.",
        "What amount would make this right?",
        "And how much is it?",
        "How much, exactly?",
    ],
    "variant": [
        "Which variant would you like instead?",
        "What size would you like?",
        "Which colour do you want?",
        "Which version should I exchange it for?",
        "What variant do you want?",
        "Which size and color would you prefer?",
        "What option would you like instead?",
        "Which color would you like?",
        "What size should the new one be?",
        "Which variant of the shoe do you want?",
        "What would you like to exchange it for?",
        "Could you tell me which size you want?",
        "Please tell me which version you'd like.",
        "What colour should it be?",
        "Which option do you prefer?",
        "What size and colour?",
        "Let me know which variant you want.",
        "Which version do you want instead?",
        "Kindly tell me what size you need.",
        "Which size would suit you?",
    ],
}

PROPOSALS = [
    "I can refund the full $42.50. Shall I proceed?",
    "Would you like me to cancel it?",
    "Do you want me to go ahead with the refund?",
    "Can you confirm you want the refund?",
    "Please confirm that I should cancel the order.",
    "Is that OK?",
    "OK to proceed?",
    "May I go ahead?",
    "Should I issue the refund now?",
    "I'll refund $42.50 to your card. Is that correct?",
    "Do you agree to this exchange?",
    "Want me to process it?",
    "Would you like me to update the address?",
    "Is it okay if I cancel it now?",
    "Shall I make the change?",
    "Can I proceed with the exchange?",
    "Are you sure you want to cancel?",
    "Is this fine?",
    "Do you want me to do that?",
    "Would you like me to proceed?",
]
REFUSALS = [
    "I'm sorry, I can't refund that order.",
    "Unfortunately, that order is outside the 30-day window.",
    "I cannot cancel an order that has shipped.",
    "I'm afraid that's against our policy.",
    "This order is not eligible for a refund.",
    "I'm unable to do that.",
    "That isn't possible, sorry.",
    "I won't be able to refund more than you paid.",
    "The order is no longer eligible.",
    "Our policy doesn't allow that.",
    "I'm not able to make exceptions.",
    "That amount exceeds what can be refunded.",
    "Sorry, the variant you want is out of stock.",
    "That order doesn't belong to your account, so I can't act on it.",
    "I'm sorry, but refunds are only possible for delivered orders.",
    "Unfortunately I cannot help with that.",
    "I can't change the address of a shipped order.",
    "That's not allowed under our rules, sorry.",
    "I'm sorry, I cannot do that for you.",
    "Regrettably, I'm unable to process that refund.",
]


def _user(**overrides: Any) -> ScriptedUser:
    return ScriptedUser(parse_user_section({"opening": "Hi, I need help with an order.", "facts": FACTS, **overrides}))


def _expected(fact: str) -> str:
    value = FACTS[fact]
    if fact == "address":
        return "12 Birch Way"
    if fact == "variant":
        return "size 10"
    if fact == "amount":
        return "42.50"
    return str(value)


def paraphrase_accuracy() -> dict[str, float]:
    """Share of phrasings the scripted user answers right, per kind of agent message."""
    scores: dict[str, float] = {}
    for fact, phrasings in PARAPHRASES.items():
        right = 0
        for phrasing in phrasings:
            reply, ended = _user().reply(phrasing)
            right += int(_expected(fact) in reply and not ended)
        scores[fact] = right / len(phrasings)
    scores["proposal"] = sum(_user().reply(text) == ("Yes, please go ahead.", False) for text in PROPOSALS) / len(
        PROPOSALS
    )
    refused = 0
    for text in REFUSALS:
        user = _user(pressure=["Please make an exception."])
        refused += int(user.reply(text) == ("Please make an exception.", False))
    scores["refusal"] = refused / len(REFUSALS)
    return scores


def test_the_scripted_user_understands_paraphrases() -> None:
    scores = paraphrase_accuracy()
    overall = sum(scores.values()) / len(scores)
    assert overall >= 0.95, scores
    assert min(scores.values()) >= 0.9, scores


def test_facts_are_revealed_only_when_asked() -> None:
    user = _user()
    reply, ended = user.reply("Thanks for reaching out. I'll look into this for you.")
    assert ended  # a statement is the agent's conclusion
    for value in ("alice.moreau@example.com", "O-5001", "Birch"):
        assert value not in reply
    reply, _ = _user().reply("What's your email?")
    assert "alice.moreau@example.com" in reply and "O-5001" not in reply and "Birch" not in reply


def test_both_facts_asked_in_one_message_are_both_answered() -> None:
    reply, _ = _user().reply("Could you give me your email address and the order number?")
    assert "alice.moreau@example.com" in reply and "O-5001" in reply


def test_a_wrong_detail_first_then_the_right_one_when_told() -> None:
    user = _user(wrong_first={"email": "alice.shop@example.net"})
    first, _ = user.reply("What is your email?")
    assert "alice.shop@example.net" in first
    second, _ = user.reply("I couldn't find an account with that email. Could you check it?")
    assert "alice.moreau@example.com" in second


def test_a_user_who_changes_the_request_and_one_who_presses() -> None:
    user = _user(change="Actually, change the address instead.")
    assert user.reply("Shall I cancel it?") == ("Actually, change the address instead.", False)
    assert user.reply("Shall I change the address?") == ("Yes, please go ahead.", False)
    presser = _user(pressure=["Just this once!", "Half, then?"])
    assert presser.reply("I'm sorry, I can't refund it.") == ("Just this once!", False)
    assert presser.reply("I'm afraid I can't make exceptions.") == ("Half, then?", False)
    reply, ended = presser.reply("Sorry, I cannot refund any part of it.")
    assert ended


def test_the_user_leaves_after_max_turns_and_when_confused() -> None:
    user = _user(max_turns=2)
    user.reply("What's your email?")
    user.reply("What's the order number?")
    assert user.reply("What's your email?")[1] is True
    confused = _user()
    assert confused.reply("Hmm?")[1] is False
    assert confused.reply("Eh?")[1] is False
    assert confused.reply("What?")[1] is True


@pytest.mark.parametrize(
    ("section", "message"),
    [
        ({}, "user.opening"),
        ({"opening": "hi", "facts": []}, "user.facts"),
        ({"opening": "hi", "wrong_first": {"email": "x"}}, "wrong_first names email"),
        ({"opening": "hi", "kind": "robot"}, "user.kind"),
        ({"opening": "hi", "mood": "grumpy"}, "unknown user field"),
        ({"opening": "hi", "max_turns": 0}, "max_turns"),
    ],
)
def test_malformed_user_sections_say_what_to_write(section: dict[str, Any], message: str) -> None:
    with pytest.raises(EnvFileError, match=message):
        parse_user_section(section)


def test_refund_conv_observation_never_holds_the_private_facts() -> None:
    registry = get_registry()
    for index, task in enumerate(registry.tasks("workflow/refund-conv-v0")):
        env = registry.make("workflow/refund-conv-v0", task=index)
        observation, info = env.reset(seed=0)
        text = json.dumps(observation)
        assert info.get("conversation") is True
        for key, value in task.user["facts"].items():
            if key == "name":
                continue
            shown = value["street"] if isinstance(value, dict) and "street" in value else value
            assert str(shown) not in text, (task.id, key)
        assert task.instruction not in text
        env.close()


def _as_respond_calls(message: dict[str, Any]) -> dict[str, Any]:
    if message.get("tool_calls") or not message.get("content"):
        return message
    return {
        "role": "assistant",
        "content": "",
        "tool_calls": [{"id": "r", "name": "respond_to_user", "arguments": {"message": message["content"]}}],
    }


def test_respond_to_user_tool_calls_are_the_same_as_plain_messages() -> None:
    registry = get_registry()
    for index in range(0, 40, 7):
        env = registry.make("workflow/refund-conv-v0", task=index)
        oracle = env.unwrapped if hasattr(env, "unwrapped") else env
        trajectory = rollout(
            env, lambda observation, oracle=oracle: _as_respond_calls(oracle.oracle_action()), seed=0, max_steps=40
        )
        assert trajectory.total_reward == 1.0, (index, trajectory.steps[-1].info.get("score"))
        env.close()
    assert any(tool["function"]["name"] == "respond_to_user" for tool in env.tools)


def test_a_model_driven_user_section_without_a_policy_is_a_config_error() -> None:
    from rolloutgym_workflow.user import make_user

    with pytest.raises(ConfigError, match="--user-policy"):
        make_user(parse_user_section({"opening": "hi", "kind": "model"}))


def test_a_policy_that_samples_its_action_space_can_play_the_user() -> None:
    """``--user-policy random`` (was: the user side had no action space, an env error per episode)."""
    from rolloutgym_workflow.user import make_user

    user = make_user(parse_user_section({"opening": "My order came broken."}), user_policy="random")
    for _ in range(3):
        text, ended = user.reply("Could you give me your order number?")
        assert isinstance(text, str) and text and not ended


ENV_FILE = """
from rolloutgym import Environment, Task

env = Environment(
    name="Cafe",
    slug="cafe",
    template="workflow",
    description="Take coffee orders. Ask the customer for their name before placing the order.",
    config={
        "tools": [
            {"kind": "action", "name": "place_order", "description": "Place an order.",
             "stateArray": "orders", "paramsSchema": {"name": "string", "drink": "string"}},
        ],
        "initialMutableState": {"orders": []},
    },
    verifier={"primitives": [{"name": "state", "type": "ground_truth_match"}], "scoring": "binary"},
)
env.tasks = [
    Task(
        instruction="Order a flat white for Sam.",
        user={"opening": "Hi! I'd like to order a drink.", "facts": {"name": "Sam", "drink": "flat white"}},
        hidden_ground_truth={"orders": [{"name": "Sam", "drink": "flat white"}]},
        reference_actions=[
            {"role": "assistant", "content": "Sure! What's your name, and which drink would you like?"},
            {"name": "place_order", "arguments": {"name": "Sam", "drink": "flat white"}},
        ],
        reference_answer="Your flat white is ordered, Sam.",
    )
]
"""


def test_an_sdk_style_env_file_with_a_user_section_runs(tmp_path: Any) -> None:
    import rolloutgym as rg

    path = tmp_path / "cafe_env.py"
    path.write_text(ENV_FILE)
    oracle = rg.run(str(path), policy="oracle", out=str(tmp_path / "oracle.jsonl"))
    null = rg.run(str(path), policy="null", out=str(tmp_path / "null.jsonl"))
    assert oracle.summary.pass_rate == 1.0 and null.summary.pass_rate == 0.0
    lines = (tmp_path / "oracle.jsonl").read_text().splitlines()
    assert '"content":"Sam' in lines[-1].replace(": ", ":") or "My name is Sam" in lines[-1]

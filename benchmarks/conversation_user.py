"""The scripted user of conversational workflow envs: cost per turn, and robustness to paraphrase.

1. Cost: one scripted-user turn vs one workflow tool call (``get_order``) in the same env,
   measured in this run; the ratio says whether the user dominates an episode.
2. Robustness: every reference conversation of ``workflow/refund-conv-v0`` is replayed with
   each agent question rewritten in 20 paraphrases per kind (held out: none of them is in
   the tests' phrasings); the table gives the share of conversations that still reach the
   right end state (reward 1.0), per kind of question.

    python benchmarks/conversation_user.py [--repeats 5]
"""

from __future__ import annotations

import argparse
import re
import time

from rolloutgym.registry import get_registry
from rolloutgym_workflow.scripted_user import ScriptedUser
from rolloutgym_workflow.user import parse_user_section

# The agent's questions for the email and the order number in the reference conversations
# (plugins/workflow/src/rolloutgym_workflow/data/refund_conv_tasks.jsonl), replaced below.
_ASK_EMAIL = (
    "I can help with that. Could you tell me the email address on your account?",
    "Sure. First I need to verify your identity: what is your email address?",
    "Happy to help. What email do you use with us?",
)
_ASK_ORDER = (
    "Thanks, you're verified. Which order is this about? Please give me the order number.",
    "Thank you. What is the order number?",
    "You're verified. Could you share the order ID?",
)

HELD_OUT: dict[str, list[str]] = {
    "email": [
        "Let's get you verified. Your email, please?",
        "What email address do you have on file with us?",
        "Could you type the email tied to your account?",
        "For security, which email is registered to you?",
        "I'll look you up. What's your e-mail?",
        "May I get the email you signed up with?",
        "Which e-mail address should I search for?",
        "Can you send me your account's email address?",
        "Please share your e-mail so I can verify you.",
        "What's the email on your profile?",
        "To start, I need the email linked to your account.",
        "Could you let me know your email?",
        "Your account email would help me find you. What is it?",
        "What email are you registered under?",
        "Before I check, can you provide your email?",
        "Tell me the email you use for orders, please.",
        "Can you confirm the email address on the account?",
        "Which email did you order with?",
        "I need to authenticate you first: what's your email?",
        "Would you share the email for your account?",
    ],
    "order": [
        "What's the number of the order?",
        "Which order should I check?",
        "Can you tell me the order ID?",
        "Please send the order number.",
        "Which order is it?",
        "Could you give me the ID of the order?",
        "What order number is on your receipt?",
        "May I have the order ID?",
        "What order are we talking about?",
        "Let me know which order, please.",
        "Which one of your orders is this?",
        "Please provide the order reference.",
        "What is the order's number?",
        "Can you share which order you mean?",
        "I'll need the order number.",
        "Which order do you need help with?",
        "Tell me the order ID, please.",
        "What's the order reference?",
        "Do you have the order number?",
        "Which of your orders should I look at?",
    ],
    "item": [
        "What's the item you want to return?",
        "Which product from the order?",
        "Which item is it?",
        "Tell me which product, please.",
        "Which of the items should go back?",
        "What item should I refund?",
        "Could you name the item?",
        "Which one do you want to return?",
        "What product is this about?",
        "Which item are you sending back?",
        "Let me know the item, please.",
        "What did you want to return?",
        "Which item in that order?",
        "Can you tell me which product?",
        "Which item should I take off?",
        "Please tell me the item.",
        "What item do you mean?",
        "Which of those products?",
        "What's the product you'd like refunded?",
        "Which one should I refund?",
    ],
    "address": [
        "Where should it go now?",
        "What's the delivery address you want?",
        "Which address should we use?",
        "Please tell me the new address.",
        "What's your new shipping address?",
        "Where do you want it shipped?",
        "What address should I put on the order?",
        "Could you share the new delivery address?",
        "What is the address we should send it to?",
        "Let me know the new shipping address.",
        "Which address do you want it sent to?",
        "What's the new mailing address?",
        "Where would you like it to go?",
        "Can you give me the new address?",
        "Please provide the shipping address.",
        "What address should I use?",
        "Where shall we deliver it?",
        "Tell me the new address, please.",
        "What's the address to ship to?",
        "Could you tell me where to send it?",
    ],
    "variant": [
        "Which version would you prefer?",
        "What size do you want instead?",
        "Which colour would you like?",
        "What variant should I swap it for?",
        "Which option do you want?",
        "What would you like to exchange it for?",
        "Which size would you like?",
        "Let me know which variant.",
        "What colour and size?",
        "Which version do you need?",
        "Tell me the variant you want.",
        "What size should I send?",
        "Which color should it be?",
        "Which of the other variants?",
        "What option would you prefer?",
        "Which variant do you want instead?",
        "What size and colour do you want?",
        "Please tell me the version you'd like.",
        "Which one would you like instead?",
        "What variant would suit you?",
    ],
    "proposal": [
        "Shall I go ahead?",
        "Would you like me to do that?",
        "Do you want me to proceed?",
        "Can you confirm?",
        "Is that okay with you?",
        "OK to proceed?",
        "May I proceed?",
        "Should I do it now?",
        "Do you agree?",
        "Want me to go ahead?",
        "Would you like me to proceed?",
        "Is that alright?",
        "Can I go ahead?",
        "Shall I process it?",
        "Do you want me to do this?",
        "Is this correct?",
        "Please confirm that I should proceed.",
        "Is it okay if I proceed?",
        "Should I go ahead with it?",
        "Are you sure you want this?",
    ],
}


def _kind(message: str) -> str | None:
    if message in _ASK_EMAIL:
        return "email"
    if message in _ASK_ORDER:
        return "order"
    if message.startswith("Which item"):
        return "item"
    if message.startswith("What is the new shipping address"):
        return "address"
    if message.startswith("Which variant"):
        return "variant"
    if message.rstrip().endswith("?") and not message.startswith(("How much", "I couldn't")):
        return "proposal"
    return None


def _rewrite(message: str, kind: str, variant: str) -> str:
    if kind == "proposal":
        statement = re.split(r"(?<=[.!])\s+", message)
        return " ".join([*statement[:-1], variant])
    return variant


def robustness() -> dict[str, tuple[int, int]]:
    registry = get_registry()
    tasks = registry.tasks("workflow/refund-conv-v0")
    results: dict[str, tuple[int, int]] = {}
    for kind, variants in HELD_OUT.items():
        passed = total = 0
        for index, task in enumerate(tasks):
            kinds = [_kind(action.get("content", "")) for action in task.reference_actions if "role" in action]
            if kind not in kinds:
                continue
            for variant in variants:
                env = registry.make("workflow/refund-conv-v0", task=index)
                env.reset(seed=0)
                reward, done = 0.0, False
                for action in [*task.reference_actions, {"role": "assistant", "content": task.reference_answer}]:
                    if "role" in action:
                        message = dict(action)
                        if _kind(message["content"]) == kind:
                            message["content"] = _rewrite(message["content"], kind, variant)
                    else:
                        message = {"role": "assistant", "content": "", "tool_calls": [{"id": "c", **action}]}
                    _, reward, terminated, truncated, _ = env.step(message)
                    if terminated or truncated:
                        done = True
                        break
                passed += int(done and reward == 1.0)
                total += 1
                env.close()
        results[kind] = (passed, total)
    return results


def cost(repeats: int) -> tuple[float, float]:
    registry = get_registry()
    env = registry.make("workflow/refund-conv-v0", task=0)
    env.reset(seed=0)
    order_id = env.unwrapped.task.user["facts"]["order_id"]
    call = {
        "role": "assistant",
        "content": "",
        "tool_calls": [{"id": "c", "name": "get_order", "arguments": {"order_id": order_id}}],
    }
    section = parse_user_section(env.unwrapped.task.user)
    questions = [
        "Could you tell me the email address on your account?",
        "What is the order number?",
        "Shall I proceed?",
    ]
    tool_times, user_times = [], []
    rounds = 2000
    for _ in range(repeats):
        started = time.perf_counter()
        for _ in range(rounds):
            env.unwrapped._call(call["tool_calls"][0])
        tool_times.append((time.perf_counter() - started) / rounds)
        started = time.perf_counter()
        for _ in range(rounds // len(questions)):
            user = ScriptedUser(section)
            for question in questions:
                user.reply(question)
        user_times.append((time.perf_counter() - started) / (rounds // len(questions) * len(questions)))
    env.close()
    return min(tool_times), min(user_times)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--repeats", type=int, default=5)
    arguments = parser.parse_args()
    tool, user = cost(arguments.repeats)
    print(
        f"workflow tool call (get_order): {tool * 1e6:.1f} us; scripted user turn: {user * 1e6:.1f} us; "
        f"ratio {user / tool:.2f}x"
    )
    print(
        "\nreference conversations of workflow/refund-conv-v0 replayed with 20 held-out paraphrases per question kind:"
    )
    print(f"{'kind':<10} {'conversations':>13} {'reward 1.0':>10} {'share':>7}")
    totals = [0, 0]
    for kind, (passed, total) in robustness().items():
        totals[0] += passed
        totals[1] += total
        print(f"{kind:<10} {total:>13} {passed:>10} {passed / max(total, 1):>7.1%}")
    print(f"{'all':<10} {totals[1]:>13} {totals[0]:>10} {totals[0] / max(totals[1], 1):>7.1%}")


if __name__ == "__main__":
    main()

"""An SDK-style ``browser`` environment file: a small company site with a contact form.

Written as for the rollout SDK; only the import line differs. Run it locally::

    rolloutgym run plugins/browser/examples/contact_env.py --policy oracle
    rolloutgym run plugins/browser/examples/contact_env.py --policy oracle --backend chromium
"""

from rolloutgym.declarative import Environment, Task, browser_config, browser_page

NAV = [
    {"type": "link", "text": "Home", "href": "https://acme.test/"},
    {"type": "link", "text": "Pricing", "href": "https://acme.test/pricing"},
    {"type": "link", "text": "Contact", "href": "https://acme.test/contact"},
]

env = Environment(
    slug="acme-contact",
    name="Acme Widgets website",
    template="browser",
    description="The website of Acme Widgets, a small hardware company.",
    config=browser_config(
        initial_url="https://acme.test/",
        pages=[
            browser_page(
                "https://acme.test/",
                title="Acme Widgets",
                elements=[
                    *NAV,
                    {"type": "heading", "text": "Acme Widgets"},
                    {"type": "text", "text": "Sturdy widgets since 1987."},
                    # Only the site itself is reachable: Chromium blocks this request and reports it.
                    {"type": "image", "src": "https://cdn.example.com/acme-logo.png", "alt": "Acme logo"},
                ],
            ),
            browser_page(
                "https://acme.test/pricing",
                title="Pricing - Acme Widgets",
                elements=[
                    *NAV,
                    {"type": "heading", "text": "Pricing"},
                    {"type": "text", "text": "Basic widget: $19 per unit."},
                    {"type": "text", "text": "Pro widget: $49 per unit."},
                ],
            ),
            browser_page(
                "https://acme.test/contact",
                title="Contact - Acme Widgets",
                elements=[
                    *NAV,
                    {"type": "heading", "text": "Contact us"},
                    {
                        "type": "form",
                        "id": "contact",
                        "action": "/contact",
                        "elements": [
                            {"type": "input", "name": "email", "label": "Your email", "inputType": "email"},
                            {
                                "type": "select",
                                "name": "topic",
                                "label": "Topic",
                                "options": ["Sales", "Support", "Press"],
                            },
                            {"type": "textarea", "name": "message", "label": "Message"},
                            {"type": "checkbox", "name": "newsletter", "label": "Send me the newsletter"},
                            {"type": "button", "text": "Send"},
                        ],
                    },
                ],
            ),
        ],
    ),
    tasks=[
        Task(
            instruction="Ask the sales team for a quote: send the contact form with your email jo@example.com, topic "
            "Sales and the message 'Quote for 200 Pro widgets, please.'",
            hidden_ground_truth={
                "submissions": [
                    {
                        "form": "contact",
                        "fields": {
                            "email": "jo@example.com",
                            "topic": "Sales",
                            "message": "Quote for 200 Pro widgets, please.",
                            "newsletter": False,
                        },
                    }
                ]
            },
            split="train",
        ),
        Task(
            instruction="Subscribe jo@example.com to the newsletter through the contact form, topic Press, message "
            "'Please add me.'",
            hidden_ground_truth={
                "submissions": [
                    {
                        "fields": {
                            "email": "jo@example.com",
                            "topic": "Press",
                            "message": "Please add me.",
                            "newsletter": True,
                        }
                    }
                ]
            },
            split="dev",
        ),
        Task(
            instruction="How much does one Pro widget cost, in dollars? Answer with the number only.",
            hidden_ground_truth={"answer": 49, "submissions": []},
            reference_actions=[{"name": "click", "arguments": {"element_id": "e2"}}],
            reference_answer="49",
            split="test",
        ),
        Task(
            instruction="Open the pricing page.",
            hidden_ground_truth={"url": "/pricing"},
            split="test",
        ),
    ],
)

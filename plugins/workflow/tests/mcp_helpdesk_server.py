"""A small stateful MCP server for the tests: a helpdesk with customers and tickets (official ``mcp`` SDK).

Written with the SDK's ``MCPServer`` (FastMCP in mcp 1.x). The state lives in the server: over
stdio one process is one helpdesk; over streamable HTTP each MCP session (``Mcp-Session-Id``)
gets its own helpdesk, as a stateful server keeps per-client state.

Run: ``python mcp_helpdesk_server.py`` (stdio) or ``python mcp_helpdesk_server.py http PORT``.
With ``HELPDESK_PID_DIR`` set, the process writes ``<pid>.pid`` there when it starts (the
tests check the process is gone after the env closes).
"""

from __future__ import annotations

import copy
import os
import sys
from typing import Any, Literal

from mcp.server.mcpserver import Context, MCPServer
from mcp.server.mcpserver.exceptions import ToolError

CUSTOMERS = {
    "ana@example.com": {"customer_id": "C-1", "name": "Ana Lima"},
    "bo@example.com": {"customer_id": "C-2", "name": "Bo Chen"},
}
INITIAL = {
    "tickets": [
        {
            "ticket_id": "T-100",
            "customer_id": "C-2",
            "subject": "Slow wifi",
            "priority": "normal",
            "status": "open",
            "resolution": None,
        }
    ]
}

app = MCPServer("helpdesk", instructions="Customer support tickets.", log_level="WARNING")
_desks: dict[str, dict[str, Any]] = {}


def _desk(ctx: Context) -> dict[str, Any]:
    headers = ctx.headers or {}
    key = headers.get("mcp-session-id", "stdio")
    if key not in _desks:
        _desks[key] = {"state": copy.deepcopy(INITIAL), "next": 1}
    return _desks[key]


@app.tool()
def find_customer(email: str) -> dict[str, Any]:
    """Look up a customer by email address."""
    customer = CUSTOMERS.get(email.strip().lower())
    if customer is None:
        raise ToolError(f"no customer with email {email!r}")
    return customer


@app.tool()
def create_ticket(customer_id: str, subject: str, priority: Literal["low", "normal", "high"], ctx: Context) -> dict:
    """Open a support ticket for a customer."""
    if customer_id not in {customer["customer_id"] for customer in CUSTOMERS.values()}:
        raise ToolError(f"no customer {customer_id!r}")
    desk = _desk(ctx)
    ticket = {
        "ticket_id": f"T-{desk['next']}",
        "customer_id": customer_id,
        "subject": subject,
        "priority": priority,
        "status": "open",
        "resolution": None,
    }
    desk["next"] += 1
    desk["state"]["tickets"].append(ticket)
    return ticket


@app.tool()
def close_ticket(ticket_id: str, resolution: str, ctx: Context) -> dict:
    """Close an open ticket with a resolution note."""
    for ticket in _desk(ctx)["state"]["tickets"]:
        if ticket["ticket_id"] == ticket_id:
            if ticket["status"] == "closed":
                raise ToolError(f"ticket {ticket_id} is already closed")
            ticket.update(status="closed", resolution=resolution)
            return ticket
    raise ToolError(f"no ticket {ticket_id!r}")


@app.tool()
def list_tickets(customer_id: str, ctx: Context) -> list[dict]:
    """The tickets of a customer."""
    return [ticket for ticket in _desk(ctx)["state"]["tickets"] if ticket["customer_id"] == customer_id]


@app.tool()
def dump_state(ctx: Context) -> dict:
    """The helpdesk's whole state (for grading)."""
    return copy.deepcopy(_desk(ctx)["state"])


@app.tool()
def reset_state(ctx: Context) -> str:
    """Start this helpdesk over from its initial state."""
    desk = _desk(ctx)
    desk.update(state=copy.deepcopy(INITIAL), next=1)
    return "reset"


@app.tool()
async def weekly_report(seconds: float) -> str:
    """A slow report (it takes ``seconds`` to build)."""
    import anyio

    await anyio.sleep(seconds)
    return "report"


@app.tool()
def self_destruct() -> str:
    """Crash the server (a server that dies mid-episode)."""
    print("helpdesk: self-destruct requested, exiting", file=sys.stderr, flush=True)
    os._exit(3)


if __name__ == "__main__":
    pid_dir = os.environ.get("HELPDESK_PID_DIR")
    if pid_dir:
        with open(os.path.join(pid_dir, f"{os.getpid()}.pid"), "w") as handle:
            handle.write(str(os.getpid()))
    if sys.argv[1:2] == ["http"]:
        app.run("streamable-http", host="127.0.0.1", port=int(sys.argv[2]))
    else:
        app.run()

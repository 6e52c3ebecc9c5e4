"""Reading a table's events and balances, for the tests of both games."""

from games.events import Paid


def balances(table):
    return {seat.person: seat.balance for seat in table.core.seats}


def flows(events):
    """Net coins per account over the Paid events."""
    net = {}
    for event in events:
        if isinstance(event, Paid):
            net[event.payer] = net.get(event.payer, 0) - event.amount
            net[event.payee] = net.get(event.payee, 0) + event.amount
    return {account: amount for account, amount in net.items() if amount}


def of_type(events, kind):
    return [event for event in events if isinstance(event, kind)]

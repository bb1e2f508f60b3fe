"""Shared by the commands: the client, numbers from options, one
resource as a (columns, values) pair."""

import argparse

from osc_lib import exceptions

from iothrottle.osc import client as client_mod
from iothrottle import tiers

quote = client_mod.quote
quote_key = client_mod.quote_key


def client(command):
    return command.app.client_manager.iothrottle


def number(text):
    """An option's number: what the tiers file and flavor extra specs
    accept (plain decimal, 0 to 1e15); argparse names the option."""
    try:
        value = tiers.parse_number(text)
    except ValueError as exc:
        raise argparse.ArgumentTypeError(str(exc)) from None
    return int(value) if value == int(value) else value


def add_number_options(parser, keys, helps):
    for key in keys:
        parser.add_argument('--' + key.replace('_', '-'), dest=key,
                            metavar='<%s>' % key.replace('_', '-'),
                            type=number, default=None, help=helps[key])


def given(parsed_args, keys):
    """``{key: value}`` of the options of ``keys`` that were given."""
    return {key: getattr(parsed_args, key) for key in keys
            if getattr(parsed_args, key) is not None}


def one(resource, columns=None):
    """(columns, values) of a dict, its keys sorted (or ``columns``)."""
    columns = tuple(columns or sorted(resource))
    return columns, tuple(resource.get(column) for column in columns)


def require_any(values, what):
    if not values:
        raise exceptions.CommandError('nothing to change: give at least '
                                      'one of %s' % what)

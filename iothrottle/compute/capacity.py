"""What each storage domain can deliver, from the [storage] options.

A domain named in ``[storage] domain_capacity`` gets its own
``max_iops/max_bytes_sec``; every other domain gets
``default_max_iops``/``default_max_bytes_sec``.  Domain keys contain ':'
(``nbd+unix:///run/store.sock``), which oslo.config's DictOpt splits at,
so an entry is taken apart at its *last* ':' instead.
"""

from oslo_config import cfg

from iothrottle.controller import model


def parse_entry(entry):
    """``'<domain key>:<max_iops>/<max_bytes_sec>'`` -> (key, Capacity).

    Raises ``ValueError`` naming the entry when it is malformed.
    """
    key, sep, numbers = entry.rpartition(':')
    iops, slash, bytes_sec = numbers.partition('/')
    if not sep or not key or not slash:
        raise ValueError(
            '[storage] domain_capacity: entry %r must be '
            '"<domain key>:<max_iops>/<max_bytes_sec>"' % entry)
    try:
        return key, model.Capacity(max_iops=float(iops),
                                   max_bytes_sec=float(bytes_sec))
    except ValueError as exc:
        raise ValueError('[storage] domain_capacity: entry %r: %s'
                         % (entry, exc)) from None


def parse_entries(entries):
    """``{key: Capacity}`` from entries; a key given twice is an error."""
    table = {}
    for entry in entries:
        key, capacity = parse_entry(entry)
        if key in table:
            raise ValueError('[storage] domain_capacity: domain %r is '
                             'given twice' % key)
        table[key] = capacity
    return table


def _entries(option_value):
    """Entries of the option: a DictOpt value or a list of strings."""
    if isinstance(option_value, dict):
        return ['%s:%s' % (key, value)
                for key, value in option_value.items()]
    return list(option_value or ())


class CapacityTable:
    """Capacity of any storage domain, per the [storage] options."""

    def __init__(self, default, by_domain):
        self.default = default
        self.by_domain = dict(by_domain)

    @classmethod
    def from_conf(cls, conf):
        """Build from ``conf.storage``; ``ValueError`` if malformed."""
        storage = conf.storage
        try:
            raw = storage.domain_capacity
        except cfg.Error as exc:
            raise ValueError('[storage] domain_capacity: %s'
                             % str(exc).splitlines()[0]) from None
        default = model.Capacity(max_iops=storage.default_max_iops,
                                 max_bytes_sec=storage.default_max_bytes_sec)
        return cls(default, parse_entries(_entries(raw)))

    def capacity_of(self, storage_domain):
        return self.by_domain.get(storage_domain, self.default)

"""Cinder's volume notifications, built and sent by Cinder's own code.

Run by ``tests/functional/test_cinder_notifications.py`` with the Python
of the Cinder venv (``tools/test-cinder``; Cinder 29.0.0), from the
repository's top directory::

    .tox/cinder-venv/bin/python -m tests.cinder.emit_notifications \\
        --config-file cinder.conf

with a ``cinder.conf`` as cinder-volume would have it::

    [DEFAULT]
    host = cinder-1@lvm
    transport_url = rabbit://guest:guest@127.0.0.1:5672/
    [database]
    connection = sqlite:////tmp/cinder.sqlite
    [oslo_messaging_notifications]
    driver = messagingv2
    topics = notifications

It sets Cinder up as cinder-volume does (``cinder.rpc.set_defaults``:
control exchange ``cinder``; ``cinder.rpc.init(CONF)``) and creates
Cinder's own schema (``cinder.db.migration.db_sync``) in its database,
so that the volume a notification describes exists where
Cinder's ``_usage_from_volume`` looks for its attachments and Glance
metadata.  Then it reads one command per line on stdin and does what
``cinder.volume.manager.VolumeManager`` does around its notification:

``create POOL SIZE_GIB``
    a Volume object created in Cinder's database (status
    ``available``, a new volume type, the id Cinder gives it), then
    ``create.end`` (the create flow's ``NotifyVolumeActionTask``);
``retype VOLUME_ID POOL``
    the volume moved to ``POOL`` with a new volume type, saved, then
    ``retype`` with ``extra_usage_info={'volume_type': new_type_id}``
    (``VolumeManager.retype``);
``delete VOLUME_ID``
    ``volume.destroy()``, then ``delete.end``
    (``VolumeManager.delete_volume``).

Every notification goes out through
``cinder.volume.volume_utils.notify_about_volume_usage(ctx, volume,
suffix, extra_usage_info, host=[DEFAULT] host)``, Cinder's notifier
and its
serializer, to the real bus.  Each command answers one JSON line on
stdout: the event type and the payload as Cinder's serializer turned it
into the message body (``{"error": ...}`` if the command failed), so the
test can tell what Cinder sent.
"""

import argparse
import json
import sys


def parse_args(argv):
    parser = argparse.ArgumentParser(prog='emit_notifications')
    parser.add_argument('--config-file', required=True,
                        help="cinder.conf: [DEFAULT] host (host@backend: "
                             "the publisher is volume.<host>) and "
                             "transport_url, [database] connection, "
                             "[oslo_messaging_notifications]")
    return parser.parse_args(argv)


class Cinder:
    """Cinder's own modules, set up as cinder-volume sets them up."""

    def __init__(self, args):
        from cinder.common import config  # noqa: F401  (Cinder's options)
        from cinder import context
        from cinder.db import migration
        from cinder import objects
        from cinder import rpc
        from oslo_config import cfg
        import oslo_messaging

        objects.register_all()
        conf = cfg.CONF
        conf(['--config-file', args.config_file], project='cinder',
             default_config_files=[])
        rpc.set_defaults(control_exchange='cinder')
        rpc.init(conf)
        migration.db_sync()
        self.host = conf.host
        self.ctxt = context.get_admin_context()
        self.sent = []
        self._serializer = oslo_messaging.JsonPayloadSerializer()
        real_get_notifier = rpc.get_notifier

        def get_notifier(*args, **kwargs):
            return _Recording(real_get_notifier(*args, **kwargs), self)
        # volume_utils reads rpc.get_notifier at each call.
        rpc.get_notifier = get_notifier

    def volume_type(self):
        from cinder.volume import volume_types
        import uuid
        return volume_types.create(self.ctxt, 'type-%s' % uuid.uuid4().hex,
                                   {'volume_backend_name': 'lvm'})['id']

    def notify(self, volume, suffix, extra_usage_info=None):
        from cinder.volume import volume_utils
        self.sent.clear()
        volume_utils.notify_about_volume_usage(
            self.ctxt, volume, suffix, extra_usage_info=extra_usage_info,
            host=self.host)
        if len(self.sent) != 1:
            raise RuntimeError('Cinder sent %d notifications for %s'
                               % (len(self.sent), suffix))
        return self.sent[0]

    def get(self, volume_id):
        from cinder import objects
        return objects.Volume.get_by_id(self.ctxt, volume_id)

    def create(self, pool, size_gib):
        from cinder import objects
        volume = objects.Volume(
            context=self.ctxt, host=pool, size=int(size_gib),
            status='available', project_id='project-1', user_id='user-1',
            availability_zone='nova', display_name='data',
            volume_type_id=self.volume_type(), attach_status='detached')
        volume.create()
        return self.notify(volume, 'create.end')

    def retype(self, volume_id, pool):
        volume = self.get(volume_id)
        new_type_id = self.volume_type()
        volume.update({'host': pool, 'volume_type_id': new_type_id})
        volume.save()
        return self.notify(volume, 'retype',
                           extra_usage_info={'volume_type': new_type_id})

    def delete(self, volume_id):
        volume = self.get(volume_id)
        volume.destroy()
        return self.notify(volume, 'delete.end')


class _Recording:
    """Cinder's prepared notifier, keeping what it is handed (as its
    serializer makes it into the message) before passing it on."""

    def __init__(self, notifier, cinder):
        self._notifier = notifier
        self._cinder = cinder

    def info(self, ctxt, event_type, payload):
        self._cinder.sent.append({
            'event_type': event_type,
            'payload': self._cinder._serializer.serialize_entity(
                ctxt, payload)})
        return self._notifier.info(ctxt, event_type, payload)


def main(argv=None):
    args = parse_args(sys.argv[1:] if argv is None else argv)
    cinder = Cinder(args)
    commands = {'create': cinder.create, 'retype': cinder.retype,
                'delete': cinder.delete}
    print(json.dumps({'ready': True}), flush=True)
    for line in sys.stdin:
        words = line.split()
        if not words:
            continue
        try:
            answer = commands[words[0]](*words[1:])
        except Exception as exc:
            answer = {'error': '%s: %s' % (type(exc).__name__, exc)}
        print(json.dumps(answer, default=str), flush=True)
    return 0


if __name__ == '__main__':
    sys.exit(main())

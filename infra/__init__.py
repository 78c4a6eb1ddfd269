"""The CDK app that deploys cairn: one stack (``infra.stack``) composed of ``infra.components``.

No business logic lives here; the only shared knowledge is read from ``cairn`` itself (the
DynamoDB key schema, the staging key prefix), never copied.
"""

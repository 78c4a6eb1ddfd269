"""The Telegram reference backend, when the stack is deployed with ``-c telegram=true``.

- ``Webhook``: ``functions/telegram/handler.py`` behind a function URL. The URL takes no AWS
  auth (Telegram cannot sign requests); every request must carry Telegram's secret-token
  header, checked in constant time by the function before it does anything else.
- ``BotSecret``: a Secrets Manager secret holding ``{"bot_token", "webhook_secret"}``; the
  webhook secret is generated here, the bot token is set by the operator after deploying.
- ``PersonaBucket``: private, encrypted as the stack is, versioned; the function reads
  ``SOUL.md`` and ``USER.md`` from it once per warm container and re-checks their ETags every
  minute.

Data access is granted by the stack (``infra.stack``), never here.
"""

from __future__ import annotations

import json

from aws_cdk import Acknowledgment, Duration, Validations
from aws_cdk import aws_kms as kms
from aws_cdk import aws_lambda as lambda_
from aws_cdk import aws_s3 as s3
from aws_cdk import aws_secretsmanager as secretsmanager
from constructs import Construct

from infra.components.encryption import RETAINED
from infra.components.lambda_defaults import LambdaDefaults
from infra.components.rollout_bucket import bucket_encryption

WEBHOOK_TIMEOUT = Duration.seconds(30)
PERSONA_FILES = ("SOUL.md", "USER.md")
BOT_TOKEN_PLACEHOLDER = "set-me: the token @BotFather gave you"  # noqa: S105 - a placeholder


class TelegramBot(Construct):
    """The webhook function and its URL, the bot's secret and the persona bucket."""

    def __init__(
        self,
        scope: Construct,
        construct_id: str,
        *,
        lambdas: LambdaDefaults,
        key: kms.IKey | None,
        model_id: str,
        timezone: str,
    ) -> None:
        super().__init__(scope, construct_id)
        self.secret = secretsmanager.Secret(
            self,
            "BotSecret",
            description="cairn Telegram bot: bot_token (set it) and webhook_secret (generated)",
            encryption_key=key,
            generate_secret_string=secretsmanager.SecretStringGenerator(
                secret_string_template=json.dumps({"bot_token": BOT_TOKEN_PLACEHOLDER}),
                generate_string_key="webhook_secret",
                # Telegram allows A-Z a-z 0-9 _ - in a secret token: letters and digits only.
                exclude_punctuation=True,
                include_space=False,
                password_length=64,
            ),
        )
        Validations.of(self.secret).acknowledge(
            Acknowledgment(
                id="AwsSolutions::AwsSolutions-SMG4",
                reason="A bot token is rotated through @BotFather, not by a rotation Lambda; "
                "docs/runtime.md gives the manual rotation steps.",
            )
        )
        self.persona = s3.Bucket(
            self,
            "PersonaBucket",
            **bucket_encryption(key),
            block_public_access=s3.BlockPublicAccess.BLOCK_ALL,
            object_ownership=s3.ObjectOwnership.BUCKET_OWNER_ENFORCED,
            enforce_ssl=True,
            minimum_tls_version=1.2,
            versioned=True,
            lifecycle_rules=[
                s3.LifecycleRule(
                    id="expire-old-persona-versions",
                    noncurrent_version_expiration=Duration.days(30),
                )
            ],
            removal_policy=RETAINED,
        )
        Validations.of(self.persona).acknowledge(
            Acknowledgment(
                id="AwsSolutions::AwsSolutions-S1",
                reason="A handful of persona files written by operators; versioning and "
                "CloudTrail record changes without a separate log bucket.",
            )
        )
        self.function = lambdas.function(
            self,
            "Webhook",
            asset="telegram",
            description="cairn: Telegram webhook (recall, answer, reply, append)",
            timeout=WEBHOOK_TIMEOUT,
            environment={
                "CAIRN_TELEGRAM_SECRET_ARN": self.secret.secret_arn,
                "CAIRN_TELEGRAM_MODEL_ID": model_id,
                "CAIRN_TELEGRAM_PERSONA_BUCKET": self.persona.bucket_name,
                "CAIRN_TELEGRAM_PERSONA_FILES": ",".join(PERSONA_FILES),
                "CAIRN_TELEGRAM_TIMEZONE": timezone,
            },
        )
        # Telegram cannot sign requests: the secret-token header is the webhook's credential.
        self.url = self.function.add_function_url(auth_type=lambda_.FunctionUrlAuthType.NONE)

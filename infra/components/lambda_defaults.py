"""The one place that decides how cairn's Lambda functions run.

Every function gets: Python 3.12 on arm64 (Graviton: cheaper per GB-second), JSON logs into its
own log group with bounded retention, active X-Ray tracing (unless the caller opts out: the
sweep, which mostly finds nothing to do), the Powertools environment, and the shared ``CAIRN_*``
environment. Custom metrics are off unless the stack turns them on (``-c metrics=true``): no
alarm reads them, and each costs $0.30 a month. Its role starts with nothing but writing its own
logs and traces; the stack grants each function exactly the data access it needs.

Code comes from ``infra.components.lambda_code``: ``build/lambda/<fn>``, a folder ``make
lambda-assets`` builds without Docker (``pip install --target`` with the Lambda platform flags),
or an inline placeholder the template refuses to deploy (offline checks).
"""

from __future__ import annotations

from collections.abc import Mapping

from aws_cdk import Acknowledgment, Duration, RemovalPolicy, Validations
from aws_cdk import aws_iam as iam
from aws_cdk import aws_lambda as lambda_
from aws_cdk import aws_logs as logs
from constructs import Construct

from infra.components.lambda_code import LambdaCode

RUNTIME = lambda_.Runtime.PYTHON_3_12
# Must match LAMBDA_PYTHON in the Makefile: the asset's wheels are built for this interpreter.
RUNTIME_PYTHON_VERSION = "3.12"
ARCHITECTURE = lambda_.Architecture.ARM_64
SERVICE_NAME = "cairn"
DEFAULT_TIMEOUT = Duration.seconds(30)

# CloudWatch Logs accepts only these retentions; a requested number of days is rounded up.
_LOG_RETENTIONS: tuple[tuple[int, logs.RetentionDays], ...] = (
    (1, logs.RetentionDays.ONE_DAY),
    (3, logs.RetentionDays.THREE_DAYS),
    (5, logs.RetentionDays.FIVE_DAYS),
    (7, logs.RetentionDays.ONE_WEEK),
    (14, logs.RetentionDays.TWO_WEEKS),
    (30, logs.RetentionDays.ONE_MONTH),
    (60, logs.RetentionDays.TWO_MONTHS),
    (90, logs.RetentionDays.THREE_MONTHS),
    (120, logs.RetentionDays.FOUR_MONTHS),
    (150, logs.RetentionDays.FIVE_MONTHS),
    (180, logs.RetentionDays.SIX_MONTHS),
    (365, logs.RetentionDays.ONE_YEAR),
    (400, logs.RetentionDays.THIRTEEN_MONTHS),
    (545, logs.RetentionDays.EIGHTEEN_MONTHS),
    (731, logs.RetentionDays.TWO_YEARS),
    (1096, logs.RetentionDays.THREE_YEARS),
    (1827, logs.RetentionDays.FIVE_YEARS),
    (2192, logs.RetentionDays.SIX_YEARS),
    (2557, logs.RetentionDays.SEVEN_YEARS),
    (2922, logs.RetentionDays.EIGHT_YEARS),
    (3288, logs.RetentionDays.NINE_YEARS),
    (3653, logs.RetentionDays.TEN_YEARS),
)


def log_retention(days: int) -> logs.RetentionDays:
    """The shortest CloudWatch Logs retention that keeps logs for at least ``days`` days."""
    for allowed, retention in _LOG_RETENTIONS:
        if days <= allowed:
            return retention
    return logs.RetentionDays.TEN_YEARS


def powertools_environment(
    service_name: str = SERVICE_NAME, *, metrics: bool = True
) -> dict[str, str]:
    """The Powertools settings every function shares (logger, metrics, tracer)."""
    return {
        "POWERTOOLS_SERVICE_NAME": service_name,
        "POWERTOOLS_METRICS_NAMESPACE": service_name,
        # Off: the EMF lines are not written, so CloudWatch creates (and bills) no metric.
        "POWERTOOLS_METRICS_DISABLED": "false" if metrics else "true",
        "POWERTOOLS_LOG_LEVEL": "INFO",
        # Memory content is never logged, and neither are raw events or responses.
        "POWERTOOLS_LOGGER_LOG_EVENT": "false",
        "POWERTOOLS_TRACER_CAPTURE_RESPONSE": "false",
    }


class LambdaDefaults(Construct):
    """Builds functions with cairn's defaults; ``environment`` is added to every function."""

    def __init__(
        self,
        scope: Construct,
        construct_id: str,
        *,
        environment: Mapping[str, str],
        log_retention_days: int,
        code: LambdaCode | None = None,
        metrics: bool = True,
    ) -> None:
        super().__init__(scope, construct_id)
        self.environment = {**powertools_environment(metrics=metrics), **environment}
        self.log_retention = log_retention(log_retention_days)
        self.code = code or LambdaCode(placeholder=True)

    def function(
        self,
        scope: Construct,
        construct_id: str,
        *,
        description: str,
        asset: str | None = None,
        code: lambda_.Code | None = None,
        handler: str | None = None,
        timeout: Duration = DEFAULT_TIMEOUT,
        memory_size: int = 1024,
        environment: Mapping[str, str] | None = None,
        traced: bool = True,
    ) -> lambda_.Function:
        """A function with the defaults; its role may only write its own logs and traces.
        Its code is ``functions/<asset>`` (``self.code``), or ``code`` and ``handler``."""
        if asset is not None:
            code, handler = self.code.code(scope, asset)
        if code is None or handler is None:
            raise ValueError("give a function either asset= or both code= and handler=")
        log_group = logs.LogGroup(
            scope,
            f"{construct_id}Logs",
            retention=self.log_retention,
            removal_policy=RemovalPolicy.DESTROY,
        )
        role = iam.Role(
            scope,
            f"{construct_id}Role",
            assumed_by=iam.ServicePrincipal("lambda.amazonaws.com"),
            description=f"{construct_id}: its own logs and traces; data grants come from the stack",
        )
        log_group.grant_write(role)
        function = lambda_.Function(
            scope,
            construct_id,
            runtime=RUNTIME,
            architecture=ARCHITECTURE,
            code=code,
            handler=handler,
            description=description,
            role=role,
            log_group=log_group,
            logging_format=lambda_.LoggingFormat.JSON,
            tracing=lambda_.Tracing.ACTIVE if traced else lambda_.Tracing.DISABLED,
            timeout=timeout,
            memory_size=memory_size,
            environment={
                **self.environment,
                **({} if traced else {"POWERTOOLS_TRACE_DISABLED": "true"}),
                **(environment or {}),
            },
        )
        _acknowledge_defaults(function, role)
        return function


def _acknowledge_defaults(function: lambda_.Function, role: iam.Role) -> None:
    Validations.of(function).acknowledge(
        Acknowledgment(
            id="AwsSolutions::AwsSolutions-L1",
            reason="Pinned to python3.12, the interpreter make lambda-assets builds wheels for.",
        )
    )
    Validations.of(role).acknowledge(
        Acknowledgment(
            id="AwsSolutions::AwsSolutions-IAM5[Resource::*]",
            reason="X-Ray PutTraceSegments/PutTelemetryRecords support no resource-level scoping.",
        )
    )

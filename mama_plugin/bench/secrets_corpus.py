"""Realistic fake credentials and personal data, in the sentences a session would hold them.

Every value is generated from a seeded random source in the format its issuer documents (the
``source`` of each kind names where the format comes from), so no real secret sits in the
repository and no scanner that looks for literal strings can be fitted to it. ``secret`` is
the part that must never reach disk; ``text`` is the line around it, as Claude or a command
would print it.
"""

from __future__ import annotations

import base64
import random
import re
import string
from dataclasses import dataclass

UPPER, LOWER, DIGITS = string.ascii_uppercase, string.ascii_lowercase, string.digits
ALNUM = UPPER + LOWER + DIGITS
HEX = "0123456789abcdef"
B64 = ALNUM + "+/"
URLSAFE = ALNUM + "-_"


@dataclass(frozen=True)
class Case:
    """One fake: its kind, where its format comes from, the line, and what must not leak."""

    kind: str
    source: str
    text: str
    secret: str
    personal: bool = False


def _pick(rng: random.Random, alphabet: str, n: int) -> str:
    return "".join(rng.choice(alphabet) for _ in range(n))


def _luhn_complete(rng: random.Random, prefix: str, length: int) -> str:
    body = prefix + _pick(rng, DIGITS, length - len(prefix) - 1)
    for check in DIGITS:
        total = 0
        for i, ch in enumerate(reversed(body + check)):
            n = int(ch) * (2 if i % 2 else 1)
            total += n - 9 if n > 9 else n
        if total % 10 == 0:
            return body + check
    raise AssertionError("unreachable: one check digit always fits")


# One kind per line: name, the secret's shape, the line it sits in ({s}), where the format is
# documented. In a shape, {X:n} is n characters of alphabet X (see _ALPHABETS); {word} is a
# dictionary word with no digit; {basic:user} is HTTP Basic's base64 of user:{word};
# {luhn:prefix:length} a card number that passes the Luhn check.
KINDS: tuple[tuple[str, str, str, str], ...] = (
    ("aws_access_key_id", "AKIA{A:16}", "export AWS_ACCESS_KEY_ID={s}", "AWS IAM identifiers"),
    ("aws_secret_access_key", "{B:40}", "aws_secret_access_key = {s}", "AWS CLI config files"),
    (
        "aws_console_csv",
        "{B:40}",
        "Access key ID,Secret access key\nAKIA{A:16},{s}",
        "AWS console: Download .csv file of a new access key",
    ),
    ("aws_temporary_key_id", "ASIA{A:16}", "creds: {s} expires in 1h", "AWS IAM identifiers"),
    (
        "github_pat_classic",
        "ghp_{N:36}",
        "git clone https://{s}@github.com/acme/api.git",
        "GitHub: behind GitHub's new authentication token formats (2021)",
    ),
    (
        "github_pat_fine_grained",
        "github_pat_{N:22}_{N:59}",
        "GH token is {s}",
        "GitHub: fine-grained personal access tokens",
    ),
    ("github_oauth", "gho_{N:36}", "the app got {s} back", "GitHub token formats"),
    (
        "gitlab_pat",
        "glpat-{S:20}",
        "curl --header 'PRIVATE-TOKEN: {s}' https://gitlab.example.com",
        "GitLab docs: token prefixes",
    ),
    (
        "slack_bot_token",
        "xoxb-{D:12}-{D:13}-{N:24}",
        "SLACK token {s} posts to #ops",
        "Slack API: token types",
    ),
    (
        "slack_webhook",
        "T{U:8}/B{U:10}/{N:24}",
        "alerts go to https://hooks.slack.com/services/{s}",
        "Slack API: incoming webhooks",
    ),
    ("stripe_live_secret", "sk_live_{N:24}", "stripe.api_key = {s}", "Stripe docs: API keys"),
    ("stripe_test_secret", "sk_test_{N:24}", "tests use {s} for now", "Stripe docs: API keys"),
    (
        "stripe_webhook_secret",
        "whsec_{N:32}",
        "signing secret {s} from the dashboard",
        "Stripe docs: verify webhook signatures",
    ),
    ("openai_project_key", "sk-proj-{S:48}", "OPENAI key {s}", "OpenAI API reference"),
    (
        "anthropic_api_key",
        "sk-ant-api03-{S:93}AA",
        "set ANTHROPIC_API_KEY to {s}",
        "Anthropic API: getting started",
    ),
    (
        "google_api_key",
        "AIza{S:35}",
        "maps key {s} restricted to the app",
        "Google Cloud: API keys",
    ),
    (
        "google_oauth_client_secret",
        "GOCSPX-{S:28}",
        '"client_secret": "{s}"',
        "Google Identity: OAuth 2.0 client_secret.json",
    ),
    (
        "gcp_service_account_key",
        "{B:64}",
        '"private_key": "-----BEGIN PRIVATE KEY-----\\n{s}\\n-----END PRIVATE KEY-----\\n"',
        "Google Cloud IAM: service account JSON key file",
    ),
    ("sendgrid_api_key", "SG.{S:22}.{S:43}", "mailer uses {s}", "SendGrid docs: API keys"),
    ("twilio_api_key", "SK{H:32}", "twilio api key {s}", "Twilio docs: API keys"),
    ("twilio_auth_token", "{H:32}", "TWILIO_AUTH_TOKEN={s}", "Twilio docs: auth tokens"),
    ("vault_service_token", "hvs.{S:90}", "VAULT_TOKEN is {s}", "HashiCorp Vault: token prefixes"),
    (
        "pypi_token",
        "pypi-AgEIcHlwaS5vcmc{S:70}",
        "twine upload -u __token__ -p {s} dist/*",
        "PyPI help: API tokens",
    ),
    (
        "npm_token",
        "npm_{N:36}",
        "//registry.npmjs.org/:_authToken={s}",
        "npm: new access token format (2021)",
    ),
    (
        "azure_storage_account_key",
        "{B:86}==",
        "DefaultEndpointsProtocol=https;AccountName=acme;AccountKey={s};EndpointSuffix=core.windows.net",
        "Azure Storage: configure a connection string",
    ),
    (
        "azure_sas_signature",
        "{N:43}%3D",
        "https://acme.blob.core.windows.net/c/f.txt?sv=2022-11-02&sp=r&sig={s}",
        "Azure Storage: shared access signatures",
    ),
    (
        "jwt",
        "eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9.eyJzdWIiOiI{N:20}.{S:43}",
        "the session cookie held {s}",
        "RFC 7519",
    ),
    (
        "rsa_private_key",
        "{B:64}",
        "-----BEGIN RSA PRIVATE KEY-----\n{s}\n{B:64}\n-----END RSA PRIVATE KEY-----",
        "RFC 7468",
    ),
    (
        "openssh_private_key",
        "b3BlbnNzaC1rZXktdjEAAAAA{B:40}",
        "-----BEGIN OPENSSH PRIVATE KEY-----\n{s}\n-----END OPENSSH PRIVATE KEY-----",
        "OpenSSH PROTOCOL.key",
    ),
    (
        "postgres_url",
        "{word}{D:2}",
        "DATABASE_URL=postgres://app:{s}@db.internal:5432/main",
        "PostgreSQL libpq: connection URIs",
    ),
    (
        "redis_url_no_user",
        "{word}",
        "REDIS_URL=redis://:{s}@cache:6379/0",
        "Redis clients: redis://:password@host",
    ),
    (
        "mongodb_srv_url",
        "{N:16}",
        "mongodb+srv://admin:{s}@cluster0.abcde.mongodb.net/test",
        "MongoDB: connection strings",
    ),
    ("http_basic_header", "{basic:deploy}", "Authorization: Basic {s}", "RFC 7617"),
    (
        "bearer_header",
        "{S:40}",
        'curl -H "Authorization: Bearer {s}" https://api.example.com',
        "RFC 6750",
    ),
    (
        "curl_user_password",
        "{word}",
        "curl -u admin:{s} https://ci.example.com/api/json",
        "curl manual: -u",
    ),
    ("mysql_p_flag", "{word}", "mysql -h db -u root -p{s} shop", "MySQL manual: connecting"),
    (
        "password_flag",
        "{word}!",
        "docker login --username ci --password {s} registry.example.com",
        "docker login reference",
    ),
    ("db_password_letters_only", "{word}", "DB_PASSWORD={s}", "the README's KEY=value promise"),
    ("db_pass", "{word}", "DB_PASS={s}", "The Twelve-Factor App: config"),
    (
        "mysql_pwd_env",
        "{word}",
        "MYSQL_PWD={s} mysqldump shop",
        "MySQL manual: environment variables",
    ),
    (
        "docker_config_auth",
        "{basic:ci}",
        '{{"auths": {{"registry.example.com": {{"auth": "{s}"}}}}}}',
        "docker login: config.json credentials",
    ),
    ("netrc", "{word}", "machine api.example.com login bob password {s}", "curl: .netrc"),
    (
        "django_secret_key",
        "django-insecure-{P:50}",
        "SECRET_KEY = '{s}'",
        "Django settings: SECRET_KEY",
    ),
    ("huggingface_token", "hf_{N:34}", "HF token {s}", "Hugging Face Hub: user access tokens"),
    (
        "digitalocean_pat",
        "dop_v1_{H:64}",
        "doctl auth init -t {s}",
        "DigitalOcean API: personal access tokens",
    ),
    (
        "shopify_access_token",
        "shpat_{H:32}",
        "X-Shopify-Access-Token: {s}",
        "Shopify: access token types",
    ),
    (
        "databricks_token",
        "dapi{H:32}",
        "DATABRICKS_HOST=x DATABRICKS_TOKEN={s}",
        "Databricks: personal access tokens",
    ),
    (
        "telegram_bot_token",
        "{D:10}:AA{S:33}",
        "telegram bot token {s}",
        "Telegram Bot API: authorizing your bot",
    ),
    ("compose_password", "{word}{D:2}", "  POSTGRES_PASSWORD: {s}", "Docker Compose: environment"),
    ("json_password", "{word}", '{{"username": "svc", "password": "{s}"}}', "a JSON settings file"),
)
PERSONAL_KINDS: tuple[tuple[str, str, str, str], ...] = (
    ("email", "{name}.{name}@{name}mail.com", "ping {s} about the rollout", "RFC 5322"),
    ("phone_international", "+44 20 7946 {D:4}", "on-call phone {s}",
      "ITU-T E.164, Ofcom drama range"),
    ("phone_us", "(555) 01{D:1}-{D:4}", "call {s} if the pager fails", "NANP fictional 555-01xx"),
    ("card_visa", "{luhn:4:16}", "test card {s} exp 12/29", "ISO/IEC 7812: IIN 4, Luhn"),
    ("card_amex", "{luhn:37:15}", "amex {s}", "ISO/IEC 7812: IIN 37, Luhn"),
)  # fmt: skip

_ALPHABETS = {
    "A": UPPER + "234567", "U": UPPER + DIGITS, "D": DIGITS, "H": HEX, "N": ALNUM, "B": B64,
    "S": URLSAFE, "P": LOWER + DIGITS + "!@#%^&*(-_=+)",
}  # fmt: skip
_WORDS = ("correcthorse", "bluebattery", "staplegun", "quietmeadow", "riverlantern")
_NAMES = ("ada", "linus", "grace", "ken", "barbara", "dennis", "margaret")
_FIELD = re.compile(r"\{(\w+)(?::([^}]*))?\}")


def _fill(shape: str, rng: random.Random) -> str:
    def one(m: re.Match[str]) -> str:
        name, arg = m.group(1), m.group(2) or ""
        if name in _ALPHABETS:
            return _pick(rng, _ALPHABETS[name], int(arg))
        if name == "word":
            return rng.choice(_WORDS)
        if name == "name":
            return rng.choice(_NAMES)
        if name == "basic":
            return base64.b64encode(f"{arg}:{rng.choice(_WORDS)}".encode()).decode()
        prefix, length = arg.split(":")
        return _grouped(_luhn_complete(rng, prefix, int(length)))

    return _FIELD.sub(one, shape)


def _grouped(digits: str) -> str:
    return " ".join(digits[i : i + 4] for i in range(0, len(digits), 4))


def corpus(seed: int = 7) -> list[Case]:
    """Every kind once, generated from ``seed``."""
    rng = random.Random(seed)
    cases = []
    for personal, table in ((False, KINDS), (True, PERSONAL_KINDS)):
        for kind, shape, line, source in table:
            secret = _fill(shape, rng)
            text = _fill(line.replace("{s}", "\0").replace("{{", "{").replace("}}", "}"), rng)
            cases.append(Case(kind, source, text.replace("\0", secret), secret, personal))
    return cases


PRIVATE_VARIANTS = (
    "<private>{s}</private>",
    "<private >{s}</private >",
    '<private reason="customer">{s}</private>',
    "&lt;private&gt;{s}&lt;/private&gt;",
    "< PRIVATE >{s}< / private >",
    "<private>{s}",
)

"""Which environment variables a harvested package expects, read from its own files.

A server that exits without its credentials only lists its tools when it is started with a value for each
variable it insists on. Its code names them in many forms, and its documentation names the rest:

- code: `process.env.NAME`, `process.env['NAME']`, `const { NAME, OTHER: x } = process.env`,
  `os.environ["NAME"]`, `os.environ.get("NAME")`, `os.getenv("NAME")`, and, in a package that reads the
  environment at all, any string literal `"NAME"` (names kept in constants, `pick(env, ['NAME'])`,
  zod or pydantic-settings schemas keyed by the name);
- documentation: `NAME=value` lines of `.env.example`-like files, and `NAME=` or `"NAME": "..."` in the
  README (the `env` block of a client configuration).

Only credential-like names are kept (judged by how they end: keys, tokens, accounts, hosts...), never settings such as limits,
transports or file paths, where a placeholder breaks the server; folders a server insists on get `.`
(its scratch working folder). What the stderr of a server that exited names is read the same way
(`harvest.recover`).
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from pathlib import Path

SOURCE_SCAN_BYTES = 8_000_000
"""How much of a package's own code is read for the variables it expects."""
MAX_VARIABLES = 40

_NAME = r"[A-Z][A-Z0-9]*(?:_[A-Z0-9]+)+"
"""An environment variable's name as packages write them: upper case with at least one `_`."""
_SIMPLE_NAME = r"[A-Z][A-Z0-9_]{2,}"

_NPM_ENV = re.compile(
    rf"process\.env\.({_SIMPLE_NAME})|process\.env\[\s*['\"`]({_SIMPLE_NAME})['\"`]\s*\]"
    rf"|import\.meta\.env\.({_SIMPLE_NAME})|Deno\.env\.get\(\s*['\"]({_SIMPLE_NAME})['\"]"
)
_NPM_DESTRUCTURED = re.compile(r"(?:const|let|var)\s*\{([^{}]{1,2000})\}\s*=\s*process\.env\b")
_PY_ENV = re.compile(rf"(?:environ(?:\.get)?|getenv|env\.str|env\.get)\s*[\(\[]\s*['\"]({_SIMPLE_NAME})['\"]")
_LITERAL = re.compile(rf"['\"`]({_NAME})['\"`]")
_READS_ENV = re.compile(r"process\.env|os\.environ|getenv|BaseSettings|env_prefix|dotenv|\benv\b")
_DOTENV_LINE = re.compile(rf"^\s*(?:export\s+)?({_NAME})\s*=", re.MULTILINE)
_README_NAME = re.compile(rf"(?<![\w.$])({_NAME})\s*=(?!=)|['\"]({_NAME})['\"]\s*:\s*['\"]")

ENV_EXAMPLES = (".env.example", ".env.sample", ".env.template", "env.example", "env.template", ".env.dist",
                "example.env", ".env.local.example")
READMES = ("README.md", "README", "README.rst", "readme.md", "Readme.md")

_SECRETISH = re.compile(
    r"(?:^|_)(?:[A-Z0-9]*KEYS?|[A-Z0-9]*TOKEN|SECRET|PASSWORD|PASSWD|PASS|PAT|AUTH|CREDENTIALS?|ACCOUNT|"
    r"ACCOUNT_(?:ID|NAME|SID)|USER|USERNAME|ID|CLIENT|URL|URI|HOST|ENDPOINT|DOMAIN|ORG|ORGANI[SZ]ATION|"
    r"WORKSPACE|PROJECT|TENANT|EMAIL|ADDRESS|DSN|DATABASE|DB|INSTANCE|SITE|REGION|BUCKET|LOGIN|SUBDOMAIN|"
    r"SERVER|BASE|SID|PHONE|PHONE_NUMBER|CERT)$"
)
"""Judged by how the name ends (`..._API_KEY`, `..._BASE_URL`, `..._CLIENT_ID`): a prefix such as
`BITBUCKET_` or `MCP_EMAIL_` says nothing about the rest of a name."""
_FOLDER = re.compile(r"(?:_DIR|_DIRS|_ROOT|_DIRECTORY|_DIRECTORIES|_FOLDER)$")
"""Folders a server may insist on: given `.`, its scratch working folder."""
_CONFIG = re.compile(
    r"TRANSPORT|LIMIT|TIMEOUT|(?:^|_)MAX(?:_|$)|(?:^|_)MIN(?:_|$)|_PER_|_FILE$|_PATH$|_JSON$|ENABLE|DISABLE|_MODE$|LEVEL|"
    r"_HOURS?$|_SECONDS$|_MS$|_TTL$|RETR|VERBOSE|_CACHE|_SIZE$|_COUNT$|_VERSION$|_FORMAT$|_ALLOW|_READ_ONLY|"
    r"_STDIO|_HTTP_PORT|_LISTEN|_PERSIST|_TOOLS$|_TOOLSETS?$|_PERMISSIONS$|_TIER$|_TYPE$|_BACKEND$|_METHOD$|"
    r"_STORAGE|_BRAND|_ICON|^OTEL_|^SENTRY_|_TELEMETRY|ANALYTICS|_DEBUG|_INSECURE|_VERIFY|_REJECT_|_SSL_|"
    r"_TLS_|_FORCE_|^FORCE_|_NO_|_SKIP|_DRY_RUN|_TEST|^TEST_|_OVERRIDE$|_SCOPES?$|_LOCALE$|_LANG(UAGE)?$|"
    r"_PACKAGES$|_EXPERIMENTAL|_FEATURE|_FLAG|MATURITY|^DOTENV_|_PROXY|_ENV$|_ENVIRONMENT$|_PROFILE$|"
    r"REDIRECT_URIS|_PUBLIC_URL$|_EXTERNAL_URL$|_RESOLVED_|_CALLBACK|_WEBHOOK"
)
"""Settings, not credentials: a placeholder there (a transport, a limit, a file path) breaks the server."""
_NOT_CREDENTIALS = re.compile(
    r"^(NODE_|NPM_|npm_|PYTHON|PIP_|VIRTUAL_ENV|HOME$|PATH$|PWD$|TMPDIR$|TEMP$|TMP$|SHELL$|TERM|LANG|LC_|"
    r"DEBUG|LOG_|LOGGING|MCP_TRANSPORT|MCP_PORT|MCP_HOST|MCP_SERVER_|MCP_HTTP|MCP_LOG|FASTMCP_|PORT$|HOSTNAME$|"
    r"USERPROFILE|APPDATA|LOCALAPPDATA|XDG_|CI$|TZ$|NO_COLOR|FORCE_COLOR|HTTP_PROXY|HTTPS_PROXY|NO_PROXY|"
    r"ALL_PROXY|UV_|GITHUB_ACTIONS|GITHUB_WORKSPACE|GITHUB_REF|GITHUB_SHA|GITHUB_RUN|RUNNER_|VERCEL_|"
    r"NETLIFY$|USER$|USERNAME$|LOGNAME$|OS$|ELECTRON|COMSPEC|SYSTEMROOT|WINDIR|PROGRAMFILES|TRANSPORT|"
    r"JEST_|VITEST|BROWSER$|EDITOR$|VISUAL$|DISPLAY$|WAYLAND|SSH_|GIT_|DOCKER_|KUBERNETES_SERVICE|"
    r"AWS_LAMBDA|AWS_EXECUTION|LAMBDA_|OPENAI_BASE_URL$|ANTHROPIC_BASE_URL$|HF_|HUGGINGFACE_HUB_|TRANSFORMERS_|"
    r"TORCH|CUDA|OMP_|MKL_|OPENBLAS|PLAYWRIGHT_|PUPPETEER_|CHROME_|npm|ERR_|GCE_METADATA)"
)


def not_platform(name: str) -> bool:
    """Not a setting and not the platform's own (`NODE_ENV`, `HOME`...): a name a server may insist on."""
    return not _NOT_CREDENTIALS.match(name) and not _CONFIG.search(name)


def wanted(name: str) -> bool:
    """A credential-like name (or a folder) that gets a placeholder; settings and the platform's own don't."""
    if _NOT_CREDENTIALS.match(name) or _CONFIG.search(name):
        return False
    return bool(_SECRETISH.search(name) or _FOLDER.search(name))


def in_code(files: Iterable[Path], javascript: bool) -> list[str]:
    """Credential-like names the code reads, in first-seen order (at most `MAX_VARIABLES`)."""
    direct: dict[str, None] = {}
    literals: dict[str, None] = {}
    reads_env = False
    budget = SOURCE_SCAN_BYTES
    for path in files:
        if budget <= 0:
            break
        text = _read(path)[:budget]
        budget -= len(text)
        direct.update(dict.fromkeys(direct_reads(text, javascript)))
        literals.update(dict.fromkeys(_LITERAL.findall(text)))
        reads_env = reads_env or bool(_READS_ENV.search(text))
    names = [*direct, *(literals if reads_env else ())]
    return [n for n in dict.fromkeys(names) if wanted(n)][:MAX_VARIABLES]


def direct_reads(text: str, javascript: bool) -> list[str]:
    """The environment names one source file reads directly (`process.env.X`, destructured, `getenv`)."""
    pattern = _NPM_ENV if javascript else _PY_ENV
    names = [next(g for g in m.groups() if g) for m in pattern.finditer(text)]
    if javascript:
        for block in _NPM_DESTRUCTURED.findall(text):
            names += [part.split(":")[0].split("=")[0].strip() for part in block.split(",")]
    return [n for n in names if re.fullmatch(_SIMPLE_NAME, n)]


def in_docs(folder: Path, readme_text: str = "") -> list[str]:
    """Credential-like names the package documents: `.env.example`-like files and its README (for a
    PyPI package, the README is the long description in its METADATA: `readme_text`)."""
    found: dict[str, None] = {}
    for name in ENV_EXAMPLES:
        for match in _DOTENV_LINE.findall(_read(folder / name)):
            found[match] = None
    texts = [readme_text] + [_read(folder / name) for name in READMES]
    for text in texts:
        for groups in _README_NAME.findall(text[:400_000]):
            found[next(g for g in groups if g)] = None
    return [n for n in found if wanted(n)][:MAX_VARIABLES]


def merged(*lists: list[str]) -> list[str]:
    """The names of several lists, first-seen order, at most `MAX_VARIABLES`."""
    return list(dict.fromkeys(n for names in lists for n in names))[:MAX_VARIABLES]


def _read(path: Path) -> str:
    try:
        return path.read_text(encoding="utf-8", errors="replace")
    except OSError:
        return ""

"""Write `registry/harvest.yaml`: real MCP server packages from npm and PyPI, chosen for breadth.

A helper, not part of cworld: the committed YAML is the source the harvest reads. It picks from package
lists with one line per package (name, version, popularity, summary), tab-separated, as the package
registries' mirrors publish them:

    python scripts/harvest_list.py --npm npm.tsv --pypi pypi.tsv [--per-category 16] [--out registry/harvest.yaml]
    python scripts/harvest_list.py --npm npm.tsv --pypi pypi.tsv --per-category 32 --extend   # add more
    python scripts/harvest_list.py --fill registry/catalogs/harvested    # after a harvest: launch, expects

A package is kept when its name says MCP and its summary says it is a server (not an SDK, client,
proxy, framework or template). Each gets an application category from the words of its name and
summary; the most popular of each category are taken in turn, so that no one field (code tools, say)
crowds out the others. Versions are pinned as listed, so a harvest is repeatable. `--extend` keeps every
entry already in the list as it is (versions, hand edits) and adds the newly chosen ones, so a larger
`--per-category` tries more packages without harvesting the others again.
"""

from __future__ import annotations

import argparse
import csv
import re
import sys
from collections import defaultdict
from pathlib import Path

import yaml

CATEGORIES: dict[str, tuple[str, ...]] = {
    "database": ("postgres", "mysql", "sqlite", "mongo", "redis", "database", "supabase", "clickhouse",
                 "snowflake", "bigquery", "neo4j", "duckdb", "elasticsearch", "qdrant", "chroma", "pinecone",
                 "sql", "milvus", "firebase", "airtable", "dynamodb", "cassandra", "prisma"),
    "cloud": ("aws", "azure", "gcp", "google cloud", "cloudflare", "vercel", "netlify", "heroku", "s3",
              "lambda", "digitalocean", "bedrock", "render"),
    "devops": ("kubernetes", "docker", "terraform", "k8s", "helm", "ansible", "grafana", "prometheus",
               "datadog", "sentry", "monitoring", "observability", "logs", "ci/cd", "jenkins", "argocd",
               "pagerduty", "opsgenie", "new relic", "dokploy", "coolify"),
    "code": ("github", "gitlab", "bitbucket", "git ", "code review", "linter", "npm", "pypi", "sonar",
             "lsp", "typescript", "python", "debugger", "figma", "storybook"),
    "project": ("jira", "linear", "asana", "trello", "clickup", "monday", "todoist", "task", "project",
                "atlassian", "confluence", "youtrack", "basecamp", "notion", "plane"),
    "crm": ("salesforce", "hubspot", "crm", "zendesk", "intercom", "pipedrive", "freshdesk", "zoho",
            "customer", "marketing", "mailchimp", "klaviyo", "sales", "lead"),
    "finance": ("stripe", "payment", "finance", "financial", "stock", "crypto", "bank", "invoice",
                "accounting", "quickbooks", "xero", "trading", "market data", "blockchain", "wallet",
                "ethereum", "solana", "bitcoin", "paypal", "tax", "yahoo"),
    "travel": ("flight", "travel", "hotel", "airbnb", "booking", "trip", "airline", "train", "transit"),
    "maps": ("map", "geo", "location", "weather", "places", "gis", "openstreetmap", "route"),
    "calendar": ("calendar", "schedule", "meeting", "zoom", "calendly", "cal.com", "time zone", "timezone"),
    "messaging": ("slack", "discord", "telegram", "whatsapp", "email", "gmail", "mail", "sms", "twilio",
                  "teams", "chat", "messag", "outlook", "imap", "matrix"),
    "documents": ("docs", "document", "pdf", "word", "excel", "spreadsheet", "sheets", "powerpoint",
                  "markdown", "obsidian", "office", "drive", "dropbox", "onedrive", "sharepoint", "note"),
    "search": ("search", "brave", "tavily", "exa", "serp", "perplexity", "duckduckgo", "crawl", "scrap",
               "fetch", "web"),
    "ecommerce": ("shopify", "commerce", "woocommerce", "amazon", "shop", "store", "product", "ebay",
                  "etsy", "magento", "bigcommerce"),
    "health": ("health", "medical", "fhir", "clinical", "patient", "pubmed", "drug", "fitness",
               "nutrition", "biomed", "genom"),
    "education": ("education", "learn", "course", "canvas", "moodle", "student", "arxiv", "paper",
                  "research", "wikipedia", "academic", "scholar", "math", "lean"),
    "media": ("youtube", "spotify", "image", "video", "music", "audio", "photo", "podcast", "tiktok",
              "instagram", "twitter", " x ", "reddit", "social", "linkedin", "bluesky", "photoshop",
              "blender", "canva", "tts", "speech"),
    "iot": ("home assistant", "iot", "mqtt", "smart home", "homeassistant", "sensor", "device", "tesla",
            "hue", "ros"),
    "browser": ("playwright", "puppeteer", "browser", "chrome", "selenium", "screenshot"),
    "security": ("security", "vulnerab", "pentest", "nmap", "cve", "auth0", "okta", "vault", "secret"),
    "knowledge": ("memory", "knowledge", "rag", "vector", "embedding", "context", "graph"),
    "utilities": ("time", "calculator", "filesystem", "file", "shell", "terminal", "command", "sequential",
                  "thinking", "random", "uuid", "convert", "qr", "diagram", "draw"),
}

_EXCLUDE = re.compile(
    r"\b(sdk|framework|inspector|client|boilerplate|template|starter|proxy|gateway|router|adapter|adapters|"
    r"middleware|bridge|types|typings|create-|scaffold|toolkit for building|library for building|"
    r"build mcp servers|deprecated|renamed|instrumentation|example|demo|test server|hello world|cli for|"
    r"registry|marketplace|installer|manager for mcp|wrapper for mcp|hub|darwin|win32|windows|macos)\b",
    re.IGNORECASE,
)
_SERVER = re.compile(r"(mcp|model context protocol)[- ]?server|server for|mcp\b", re.IGNORECASE)


def _category(text: str) -> str | None:
    """The first category one of whose words starts a word of the text ("train" not in "constraint")."""
    lowered = f" {re.sub(r'[-_]', ' ', text.lower())} "
    for name, words in CATEGORIES.items():
        if any(re.search(r"(?<![a-z0-9])" + re.escape(w.strip()), lowered) for w in words):
            return name
    return None


def _rows(path: Path) -> list[list[str]]:
    csv.field_size_limit(sys.maxsize)
    with path.open(encoding="utf-8", errors="replace", newline="") as fh:
        return [row for row in csv.reader(fh, delimiter="\t", quoting=csv.QUOTE_NONE) if len(row) >= 4]


def _keep(name: str, summary: str) -> bool:
    return ("mcp" in name.lower() and bool(summary) and bool(_SERVER.search(summary))
            and not _EXCLUDE.search(f"{name} {summary}"))


def npm_candidates(path: Path, min_downloads: int) -> list[dict[str, object]]:
    out = []
    for name, version, downloads, summary, *_ in _rows(path)[1:]:
        if not downloads.isdigit() or int(downloads) < min_downloads or not _keep(name, summary):
            continue
        if (category := _category(f"{name} {summary}")) is not None:
            out.append({"registry": "npm", "package": name, "version": version, "category": category,
                        "popularity": int(downloads), "summary": summary})
    return out


def pypi_candidates(path: Path, since: str) -> list[dict[str, object]]:
    out = []
    for name, version, month, rank, summary, *_ in _rows(path)[1:]:
        if month < since or not _keep(name, summary):
            continue
        if (category := _category(f"{name} {summary}")) is not None:
            # Ranked packages first (rank 1 is the most downloaded); the unranked after, newest first.
            popularity = 10**9 - int(rank) if rank.isdigit() else int(month.replace("-", ""))
            out.append({"registry": "pypi", "package": name, "version": version, "category": category,
                        "popularity": popularity, "summary": summary})
    return out


def server_id(package: str) -> str:
    """`@scope/name` -> `scope-name`: a registry server id (no `/`), readable, unique per package."""
    return re.sub(r"[^a-z0-9]+", "-", package.lower()).strip("-")


def choose(candidates: list[dict[str, object]], per_category: int, npm_share: float) -> list[dict[str, object]]:
    """The most popular of each category and registry, in turn, so every field is represented."""
    groups: dict[tuple[str, str], list[dict[str, object]]] = defaultdict(list)
    for c in sorted(candidates, key=lambda c: -int(str(c["popularity"]))):
        groups[(str(c["category"]), str(c["registry"]))].append(c)
    chosen, seen = [], set()
    for (_category, registry), items in sorted(groups.items()):
        quota = round(per_category * (npm_share if registry == "npm" else 1 - npm_share))
        for item in items[:quota]:
            sid = server_id(str(item["package"]))
            if sid not in seen:
                seen.add(sid)
                chosen.append(item)
    return chosen


def entry(item: dict[str, object]) -> dict[str, object]:
    pin = "@" if item["registry"] == "npm" else "=="
    return {
        "id": server_id(str(item["package"])),
        str(item["registry"]): f"{item['package']}{pin}{item['version']}",
        "category": item["category"],
        "summary": str(item["summary"])[:160],
    }


HEADER = (
    "# Real MCP server packages to harvest (`cworld registry harvest`), written by scripts/harvest_list.py\n"
    "# and edited by hand. Per entry: `npm: NAME@VERSION` or `pypi: NAME==VERSION`; `command` (the bin or\n"
    "# console script to start; default: the package's only one, or the one named like it); `args`;\n"
    "# `env`: values for variables it expects (default: a placeholder for each credential-like variable its\n"
    "# code reads). `launch` and `expects` say how it was started and what it read, as last harvested\n"
    "# (`--fill`). See docs/registry.md, \"Harvest\".\n"
)


def _dump(path: Path, servers: list[dict[str, object]]) -> None:
    body = yaml.safe_dump({"servers": servers}, sort_keys=False, width=120, allow_unicode=True,
                          default_flow_style=None)
    path.write_text(HEADER + body, encoding="utf-8")


def extended(path: Path, chosen: list[dict[str, object]]) -> tuple[list[dict[str, object]], int]:
    """The list at `path` as it is, with the chosen entries it does not hold yet (by id or package), all in
    the list's order (field, registry, package); and how many were added."""
    servers = list(yaml.safe_load(path.read_text(encoding="utf-8"))["servers"])
    held = {str(s["id"]) for s in servers} | {_package_of(s) for s in servers}
    new = [entry(i) for i in chosen if server_id(str(i["package"])) not in held and str(i["package"]) not in held]
    return sorted(servers + new, key=_order), len(new)


def _package_of(item: dict[str, object]) -> str:
    pinned = str(item.get("npm") or item.get("pypi") or "")
    return pinned.rsplit("@", 1)[0] if item.get("npm") else re.split(r"[=<>~!]", pinned)[0]


def _order(item: dict[str, object]) -> tuple[str, str, str]:
    return str(item.get("category", "")), "npm" if item.get("npm") else "pypi", _package_of(item)


def fill(path: Path, catalog: Path) -> None:
    """Write each entry's `launch` and `expects` from the last harvest (its catalog file, else its
    summary line), so the list says how every server is started and what it expects."""
    import json

    data = yaml.safe_load(path.read_text(encoding="utf-8"))
    summary = json.loads((catalog / "summary.json").read_text(encoding="utf-8"))
    tried = {s["id"]: s for s in summary.get("servers", [])}
    filled = 0
    for item in data["servers"]:
        record = catalog / f"{item['id']}.json"
        if record.is_file():
            prov = json.loads(record.read_text(encoding="utf-8"))["provenance"]
            launch, expects = prov.get("launch") or [], prov.get("env") or []
        elif item["id"] in tried:
            launch, expects = tried[item["id"]].get("launch") or [], tried[item["id"]].get("env") or []
        else:
            continue
        if launch:
            item["launch"] = launch
        if expects:
            item["expects"] = expects
        filled += 1
    _dump(path, data["servers"])
    print(f"{filled} of {len(data['servers'])} entries filled from {catalog}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--fill", type=Path, metavar="CATALOG",
                        help="Only fill `launch` and `expects` of --out from a harvested catalog folder.")
    parser.add_argument("--npm", type=Path)
    parser.add_argument("--pypi", type=Path)
    parser.add_argument("--per-category", type=int, default=16)
    parser.add_argument("--npm-share", type=float, default=0.65)
    parser.add_argument("--min-downloads", type=int, default=400)
    parser.add_argument("--since", default="2025-06")
    parser.add_argument("--out", type=Path, default=Path("registry/harvest.yaml"))
    parser.add_argument("--extend", action="store_true",
                        help="Keep the entries already in --out and add the newly chosen ones.")
    args = parser.parse_args()
    if args.fill:
        fill(args.out, args.fill)
        return
    if not (args.npm and args.pypi):
        parser.error("--npm and --pypi are needed to choose the list")
    candidates = npm_candidates(args.npm, args.min_downloads) + pypi_candidates(args.pypi, args.since)
    chosen = sorted(choose(candidates, args.per_category, args.npm_share),
                    key=lambda i: (str(i["category"]), str(i["registry"]), str(i["package"])))
    if args.extend:
        servers, added = extended(args.out, chosen)
        _dump(args.out, servers)
        print(f"{added} servers added to the {len(servers) - added} of {args.out}")
        return
    _dump(args.out, [entry(i) for i in chosen])
    counts: dict[str, int] = defaultdict(int)
    for item in chosen:
        counts[str(item["category"])] += 1
    print(f"{len(chosen)} servers ({sum(i['registry'] == 'npm' for i in chosen)} npm) of {len(candidates)} "
          f"candidates -> {args.out}: {dict(sorted(counts.items()))}")


if __name__ == "__main__":
    main()

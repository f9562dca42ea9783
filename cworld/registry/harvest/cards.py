"""Which category card each harvested tool takes. Three explicit rules, the first that applies wins:

1. `TOOL_CARDS`: per server, tool-name patterns, for servers that mix kinds of tools (Google Drive's Sheets,
   Slides and Calendar tools; a campus portal's maps, library and courses);
2. `SERVER_CARDS`: per server, when its harvest field is too coarse or wrong for all its tools (AutoCAD
   filed under `ecommerce`, Figma under `code`, crypto exchanges under `finance`);
3. `CARD_OF`: the harvest field's card (every field has one).

The card is decided when the catalog loads, from the server id, its field and the tool name, not written
into the harvested files: a re-harvest keeps it, and a new server takes its field's card until a rule
names it. `tests/test_engine_harvested.py` checks that every card named here exists.
"""

from __future__ import annotations

import re

CARD_OF: dict[str, str] = {
    "database": "sql_database",
    "code": "code_hosting",
    "project": "task_board",
    "crm": "crm",
    "finance": "finance",
    "travel": "travel",
    "calendar": "calendar",
    "messaging": "messaging",
    "documents": "documents",
    "search": "web_search",
    "ecommerce": "ecommerce",
    "health": "health_records",
    "knowledge": "knowledge_graph",
    "utilities": "utilities",
    "maps": "maps",
    "browser": "browser_automation",
    "media": "media",
    "education": "education",
    "devops": "devops",
    "cloud": "cloud_infrastructure",
    "iot": "devices",
    "security": "security",
}
"""The category card a harvested server's tools default to, by its field in harvest.yaml."""

SERVER_CARDS: dict[str, str] = {
    # design, drawing and diagrams
    "autocad-mcp-pro": "cad_drawing",
    "figma-console-mcp": "ui_design",
    "drawio-mcp-server": "diagrams",
    "drawio-mcp": "diagrams",
    "next-ai-drawio-mcp-server": "diagrams",
    "mcp-mermaid": "diagrams",
    "mcp-excalidraw-server": "diagrams",
    "antv-mcp-server-chart": "diagrams",
    # office files
    "excel-mcp-server": "spreadsheets",
    "negokaz-excel-mcp-server": "spreadsheets",
    "office-powerpoint-mcp-server": "presentations",
    # money
    "akutishevsky-lunchmoney-mcp": "accounting",
    "quickbooks-mcp": "accounting",
    "xeroapi-xero-mcp-server": "accounting",
    "acb-tax-mcp": "accounting",
    "aicoin-opendata-mcp": "crypto_markets",
    "mcpfun-mcp-server-ccxt": "crypto_markets",
    "clawnch-mcp-server": "crypto_markets",
    "provenonce-mcp": "crypto_markets",
    "arkforge-mcp": "security",
    # people and posts
    "bycrawl-mcp": "social_media",
    "agentx-social-mcp": "social_media",
    "reddit-mcp-buddy": "social_media",
    # research and reference
    "arxiv-mcp-server": "research_papers",
    "futurelab-studio-latest-science-mcp": "research_papers",
    "notebooklm-mcp-cli": "research_notebooks",
    "deepsieve-mcp": "research_notebooks",
    "30book-mcp": "library_catalog",
    "geobio-mcp-open-library": "library_catalog",
    "kimsungwhee-apple-docs-mcp": "developer_docs",
    "mastra-mcp-docs-server": "developer_docs",
    "react-aria-mcp": "developer_docs",
    "mcp-deepwiki": "developer_docs",
    "upstash-context7-mcp": "developer_docs",
    "awslabs-aws-documentation-mcp-server": "developer_docs",
    "shopify-dev-mcp": "developer_docs",
    "googlemaps-code-assist-mcp": "developer_docs",
    "nx-mcp": "developer_docs",
    # engines, automation, aviation, bookings
    "mcpforunityserver": "simulation_3d",
    "dex-isaac-mcp": "simulation_3d",
    "n8n-mcp": "workflow_automation",
    "assemblix-mcp": "workflow_automation",
    "aerospace-mcp": "aviation",
    "flightbox-mcp-server": "devops",
    "flightradar-mcp-server": "aviation",
    "flightradar24-fr24api-mcp": "aviation",
    "booksy-api-mcp": "service_bookings",
    "bookingkoala-api-mcp": "service_bookings",
    # existing cards the field missed
    "piotr-agier-google-drive-mcp": "documents",
    "dangahagan-weather-mcp": "weather",
    "h1deya-mcp-server-weather": "weather",
    "open-meteo-mcp-server": "weather",
    "mcp-server-time": "time",
    "time-mcp": "time",
    "all-abt-ntu-mcp": "education",
    "coo-quack-calc-mcp": "utilities",
    "awslabs-aws-location-mcp-server": "maps",
    "cloudbase-cloudbase-mcp": "cloud_infrastructure",
    "instantdb-mcp": "sql_database",
    "tilt-mcp": "devops",
    "agentdeskai-browser-tools-mcp": "browser_automation",
    "browserbasehq-mcp-server-browserbase": "browser_automation",
    "breachspider-mcp": "security",
    "fetcher-mcp": "web_fetch",
    "mcp-server-fetch": "web_fetch",
    "firecrawl-mcp": "web_fetch",
    "ableton-cookbook-mcp": "media",
    "andrew-nanobanana-mcp-server": "media",
    # the second harvest (harvest.yaml --extend): servers whose field's card does not fit
    "agent-browser-mcp": "browser_automation",
    "agent-security-scanner-mcp": "security",
    "arachne-mcp": "web_fetch",
    "atengk-mcp-server-kafka": "devops",
    "tiberriver256-mcp-server-azure-devops": "devops",
    "cursor-talk-to-figma-mcp": "ui_design",
    "figma-mcp": "ui_design",
    "contractor-foreman-api-mcp": "task_board",
    "fresha-api-mcp": "service_bookings",
    "joist-api-mcp": "accounting",
    "mcp-vibepowerpack": "utilities",
    "cronometer-mcp": "health_records",
    "alphafold-sovereign-mcp": "health_records",
    "erius-phone-mcp": "devices",
    "ardupilot-mcp": "aviation",
    "heroui-react-mcp": "developer_docs",
    "hugeicons-mcp-server": "developer_docs",
    "voltagent-docs-mcp": "developer_docs",
    "workos-mcp-docs-server": "developer_docs",
    "go2rtc-mcp": "media",
    "gsa-calc-mcp": "finance",
    "pacs008-mcp": "finance",
    "iran-news-mcp": "news",
    "itu-mcp": "education",
    "ku-portal-mcp": "education",
    "anki-note-mcp": "education",
    "kanibal-tools-mcp": "crm",
    "leadgreen-mcp": "utilities",
    "mcp-gsheets": "spreadsheets",
    "acmt001-mcp": "finance",
    "adenot-mcp-google-search": "web_search",
    "alibabacloud-devops-mcp-server": "devops",
    "allpepper-memory-bank-mcp": "knowledge_graph",
    "arikusi-deepseek-mcp-server": "utilities",
    "baneh-mcp": "ecommerce",
    "banimode-mcp": "ecommerce",
    "bestpred-mcp": "utilities",
    "chronicle-mcp-server": "knowledge_graph",
    "cited-mcp": "web_search",
    "geoseo-mcp": "web_search",
    "cli-mcp-server": "utilities",
    "cognitionai-metabase-mcp-server": "sql_database",
    "ergut-mcp-bigquery-server": "sql_database",
    "computeid-mcp": "security",
    "constitute-mcp": "library_catalog",
    "docshelf-mcp": "documents",
    "essencescholar-mcp": "research_papers",
    "exiryab-mcp": "health_records",
    "hypothesi-tauri-mcp-server": "browser_automation",
    "jpisnice-shadcn-ui-mcp-server": "developer_docs",
    "primeng-mcp": "developer_docs",
    "primevue-mcp": "developer_docs",
    "mfa-servicenow-mcp": "task_board",
    "minimax-coding-plan-mcp": "web_search",
    "z-ai-mcp-server": "media",
    "mcp-b-webmcp-local-relay": "browser_automation",
    "shinzolabs-gmail-mcp": "email",
}
"""Servers whose harvest field does not describe their tools: the card all their tools take."""

TOOL_CARDS: dict[str, list[tuple[str, str]]] = {
    "piotr-agier-google-drive-mcp": [
        (r"sheet|spreadsheet|dimension|column|row|named_?range|data_?validation|protect_?range", "spreadsheets"),
        (r"slide", "presentations"),
        (r"calendar", "calendar"),
    ],
    "isaacphi-mcp-gdrive": [(r"^gsheets_", "spreadsheets")],
    "clawnch-mcp-server": [(r"^clawnx_", "social_media")],
    "bycrawl-mcp": [
        (r"^gmaps_", "maps"),
        (r"^web_fetch$", "web_fetch"),
        (r"^(web|google)_search$", "web_search"),
        (r"^google_news$", "news"),
        (r"^google_finance$", "finance"),
        (r"^(google_shopping|facebook_marketplace_)", "ecommerce"),
        (r"^youtube_", "media"),
    ],
    "firecrawl-mcp": [
        (r"^firecrawl_research_(search|inspect|related|read)_paper", "research_papers"),
        (r"^firecrawl_(search|developer_search)$", "web_search"),
    ],
    "itu-mcp": [
        (r"^mail_", "email"),
        (r"^library_", "library_catalog"),
        (r"^(search_campus_locations|get_shuttle_schedule)$", "maps"),
    ],
    "all-abt-ntu-mcp": [
        (r"^(mazemap|omnibus)_", "maps"),
        (r"^drntu_", "research_papers"),
        (r"^library_(search|get_record|get_availability)$", "library_catalog"),
        (r"^news_", "news"),
    ],
}
"""Servers that mix kinds of tools: (tool-name pattern, card) pairs, searched in order, case-insensitive;
a tool no pattern matches takes the server's card."""


def server_card(server: str, field: str) -> str | None:
    """The card a harvested server's tools take unless a tool rule says otherwise."""
    return SERVER_CARDS.get(server) or CARD_OF.get(field)


def tool_card(server: str, field: str, tool: str) -> str | None:
    """The card of one harvested tool: its server's tool rule, else the server's card."""
    for pattern, card in TOOL_CARDS.get(server, []):
        if re.search(pattern, tool, re.IGNORECASE):
            return card
    return server_card(server, field)


def differing_cards(server: str, field: str, tools: list[str]) -> dict[str, str]:
    """Tool name -> card for the tools whose card is not their server's (a spec's `tool_categories`)."""
    card = server_card(server, field)
    return {name: c for name in tools if (c := tool_card(server, field, name)) and c != card}


def named_cards() -> set[str]:
    """Every card a rule names (each must exist in category_cards/)."""
    return set(CARD_OF.values()) | set(SERVER_CARDS.values()) | {c for rules in TOOL_CARDS.values() for _, c in rules}

"""Answers about kinds a server's tools name beside its card's (issue 33, "the world's records fill the
answer"): a list of sitemaps on a web-search server is shown as sitemaps, not through the card's search-result
template (which printed "Title: / URL:" with nothing after them); a search by `q_keywords` filters by it."""

from __future__ import annotations

from cworld.engine.cards.card import load_cards
from cworld.engine.schema.patterns import text_template
from cworld.engine.world.build import generated_world
from cworld.environment import Environment
from tests.engine_helpers import rules_caller, tool_spec

CARDS = load_cards(Environment.resolve().category_cards)


def test_a_cards_text_template_is_for_the_kind_that_holds_its_fields() -> None:
    card = CARDS["web_search"]
    result = card.entity("result")
    assert result is not None and text_template(card, "list", result) is not None
    sitemap = result.model_copy(update={"name": "sitemap", "fields": {"name": "title"}, "key_field": "id"})
    assert text_template(card, "list", sitemap) is None


def test_a_list_of_a_named_kind_shows_its_records_names() -> None:
    # a server the card index gives the web-search card tool by tool, as it does Google Search Console's
    tools = [tool_spec("google-search", "list_sitemaps", {"siteUrl": {"type": "string"}}),
             tool_spec("google-search", "get_sitemap", {"sitemapId": {"type": "string"}})]
    world = generated_world("google-search", CARDS["web_search"], 1, size=6, tools=tools)
    call = rules_caller("google-search", "web_search", world.state, world.kinds, tools,
                        named_kinds=world.named_kinds)
    answer = call("list_sitemaps", siteUrl="https://example.com")
    names = [r["name"] for r in world.state[world.kinds["sitemap"]].values()]
    assert not answer.is_error and all(n in answer.text for n in names) and "Title:" not in answer.text


def test_a_search_by_q_keywords_finds_what_it_names() -> None:
    tools = [tool_spec("apollo", "search_companies", {"q_keywords": {"type": "string"},
                                                       "page": {"type": "integer"}}, [])]
    world = generated_world("apollo", CARDS["crm"], 1, size=30, tools=tools)
    call = rules_caller("apollo", "crm", world.state, world.kinds, tools, named_kinds=world.named_kinds)
    name = list(world.state[world.kinds["company"]].values())[-1]["name"]
    answer = call("search_companies", q_keywords=name)
    assert name in answer.text and answer.text.count('"name"') == 1


def test_a_list_of_ids_shows_the_records_keys_and_a_list_of_names_their_names() -> None:
    from cworld.engine.rules.engine import aligned

    records = [{"article_id": "article_0016", "id": "article_0016", "title": "Sleep and memory"}]
    schema = {"type": "object", "properties": {"pmids": {"type": "array", "items": {"type": "string"}},
                                               "titles": {"type": "array", "items": {"type": "string"}}}}
    shown = aligned({"pmids": records, "titles": records}, schema)
    assert shown == {"pmids": ["article_0016"], "titles": ["Sleep and memory"]}

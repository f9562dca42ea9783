"""Generated example requests (doc2query without a model): what a tool's name and card give its document,
and a request phrased the way a person asks finding a tool whose name and description share no word with it."""

from __future__ import annotations

from pathlib import Path

from cworld.data_model.tools import ToolSpec
from cworld.registry.index import HashEmbedder, ToolIndex
from cworld.registry.index.bm25 import FIELD_WEIGHTS, BM25Index, BM25Params
from cworld.registry.index.card_vocabulary import CardVocabulary, load_card_vocabularies, vocabulary_of
from cworld.registry.index.documents import tool_document, tool_documents
from cworld.registry.index.example_requests import everyday_terms, example_requests, tool_intent
from cworld.registry.index.store import tools_example_requests

#: The request shares no word (after stemming and stopwords) with the tool's name or description.
REQUEST = "Silence the alarms from web-03 tonight"


def tool(server: str, name: str, description: str, required: tuple[str, ...] = (), category: str | None = None) -> ToolSpec:
    props = {p: {"type": "string"} for p in required}
    return ToolSpec(server=server, name=name, description=description, category=category,
                    input_schema={"type": "object", "properties": props, "required": list(required)})


def registry() -> list[ToolSpec]:
    return [
        tool("datadog", "mute_host", "Mute a host in Datadog.", ("hostname",), category="devops"),
        tool("datadog", "list_dashboards", "List every dashboard of the account.", category="devops"),
        tool("shop", "get_products_count", "Number of products in the catalog.", category="ecommerce"),
        tool("files", "read_file", "Read a text file from disk."),
        tool("weather", "get_forecast", "Weather forecast for a city.", ("city",)),
    ]


def test_the_name_gives_the_operation_kind_and_the_thing_it_acts_on() -> None:
    count = tool_intent(tool("shop", "get_products_count", ""))
    assert (count.kind, count.thing) == ("count", "products")
    assert tool_intent(tool("bycrawl", "tiktok_search_videos", "")).kind == "search"
    assert tool_intent(tool("datadog", "mute_host", "")).thing == "mute host"  # no known verb: the name is the action


def test_requests_use_the_card_words_the_required_arguments_and_everyday_words() -> None:
    vocabulary = CardVocabulary(where="online store", things=("product",))
    requests = example_requests(tool("shop", "get_products_count", "", ("store_id",)), vocabulary)
    assert requests[0] == "How many products are there in the online store?"
    assert any("the given store id" in r for r in requests)
    assert any("how many" in r and "total" in r for r in requests[-1:])  # everyday words of "count"
    assert "silence" in everyday_terms(("mute", "host"))[0]


def test_requests_are_deterministic() -> None:
    tools = registry()
    assert tools_example_requests(tools, {}) == tools_example_requests(tools, {})


def test_card_vocabulary_reads_title_entities_and_categories(tmp_path: Path) -> None:
    (tmp_path / "shop.yaml").write_text(
        "name: ecommerce\ntitle: Online store (carts, orders)\nrecognition: {categories: [shopping]}\n"
        "entities:\n  - name: order_line\n    examples: [{title: Blue mug}]\n", encoding="utf-8")
    (tmp_path / "_families.yaml").write_text("not: a card\n", encoding="utf-8")
    vocabularies = load_card_vocabularies(tmp_path)
    assert set(vocabularies) == {"ecommerce", "shopping"}
    assert vocabularies["shopping"] == CardVocabulary(where="online store", things=("order line",), example_titles=("Blue mug",))
    assert vocabulary_of({}).where == "service"


def test_the_packaged_cards_give_every_harvest_card_a_vocabulary() -> None:
    vocabularies = load_card_vocabularies()
    assert {"calendar", "devops", "ecommerce", "generic"} <= set(vocabularies)
    assert vocabularies["calendar"].where == "calendar" and "event" in vocabularies["calendar"].things


def test_examples_are_a_lexical_field_and_leave_the_dense_text_alone() -> None:
    mute = registry()[0]
    plain, with_examples = tool_document(mute), tool_document(mute, examples=["Silence alerts"])
    assert with_examples.text == plain.text  # the embedding cache keeps serving the registry's vectors
    assert with_examples.fields["examples"] == "Silence alerts" and "examples" not in plain.fields
    assert FIELD_WEIGHTS["examples"] > 0


def test_a_user_request_finds_a_tool_it_shares_no_word_with_through_its_examples() -> None:
    tools = registry()
    without = BM25Index.build([d.fields for d in tool_documents(tools)], BM25Params())
    assert without.query_scores(REQUEST).max() == 0  # nothing to match on: the plain document cannot find it
    index, _ = ToolIndex.build(tools, HashEmbedder(64), card_vocabularies={})
    assert index.search([REQUEST], 1, "bm25")[0][0][0] == "datadog/mute_host"
    assert index.search([REQUEST], 1, "hybrid")[0][0][0] == "datadog/mute_host"


def test_a_count_question_finds_the_count_tool_over_its_siblings() -> None:
    tools = [*registry(), tool("shop", "get_product", "One product by id.", ("product_id",), category="ecommerce"),
             tool("shop", "list_products", "Products of the catalog, paged.", category="ecommerce")]
    index, _ = ToolIndex.build(tools, HashEmbedder(64), card_vocabularies=load_card_vocabularies())
    assert index.search(["How many items do we sell in total?"], 1, "bm25")[0][0][0] == "shop/get_products_count"

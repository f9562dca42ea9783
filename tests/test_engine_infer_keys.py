"""Records named by keys, slugs and identifiers (`cards.operations.KEY_ARG`, `ID_ARG`), on a tracker written for
the test: `issueKey` and `repo_slug` name records where the card holds their kind (a repository by its synonym
too), `review_identifier` is an id like any other, and `api_key` names nothing."""

from __future__ import annotations

from typing import Any

from engine_helpers import rules_caller

from cworld.data_model import ToolSpec

STR = {"type": "string"}


def tool(name: str, *args: str) -> ToolSpec:
    return ToolSpec(server="tracker", name=name, description=name,
                    input_schema={"type": "object", "properties": {a: STR for a in args}, "required": list(args)})


TOOLS = [tool("getIssue", "issueKey"), tool("get_repository", "workspace", "repo_slug"),
         tool("delete_review", "review_identifier"), tool("get_issue_with_key", "issue_id", "api_key")]


def tracker() -> Any:
    state: dict[str, Any] = {
        "issues": {"iss_0001": {"id": "iss_0001", "title": "Login fails"}},
        "repositories": {"repo_0001": {"id": "repo_0001", "name": "web"}},
        "reviews": {"rev_0001": {"id": "rev_0001", "state": "approved"}}}
    return rules_caller("tracker", "code_hosting", state,
                        {"issue": "issues", "repository": "repositories", "review": "reviews"}, TOOLS)


def test_keys_slugs_and_identifiers_name_records_that_must_exist() -> None:
    call = tracker()
    assert call("getIssue", issueKey="iss_0999").error_class == "not_found"
    assert "Login fails" in call("getIssue", issueKey="iss_0001").text
    assert call("get_repository", workspace="acme", repo_slug="repo_0999").error_class == "not_found"
    assert not call("get_repository", workspace="acme", repo_slug="repo_0001").is_error
    assert call("delete_review", review_identifier="rev_0999").error_class == "not_found"
    assert not call("delete_review", review_identifier="rev_0001").is_error
    assert call("delete_review", review_identifier="rev_0001").error_class == "not_found"  # gone


def test_a_credential_key_names_no_record() -> None:
    call = tracker()
    found = call("get_issue_with_key", issue_id="iss_0001", api_key="sk-test-123")
    assert not found.is_error, found.text

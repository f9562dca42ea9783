"""Docs: documents and folders with version history, sharing, access requests, locks and comments.

Roles decide what you may do: viewers read and comment, editors also edit, move and share, owners also
unshare and delete. A viewer gets edit rights with `request_edit_access`. A locked document must be
unlocked with its password first (its owner sent it by mail). Saving with `update_document` needs the
version you read (`expected_version`): if someone saved in between, it is a conflict, not an overwrite.
"""

from __future__ import annotations

from cworld.sandbox.apps.docs.state import seed_state
from cworld.sandbox.apps.docs.tools import DocsTools
from cworld.sandbox.framework import Prerequisite


class DocsApp(DocsTools):
    name = "docs"
    volatile_paths = ("documents.**.saved_at", "comments.*.at")
    title = "Docs"
    description = "Documents and folders: read, search, write, version history, sharing, access requests, comments."
    category = "documents"
    entity_kinds = {"directory": "person", "folders": "folder", "documents": "document", "comments": "comment"}
    prerequisites = (
        Prerequisite("list_documents", "get_document", "produces", via="document_id"),
        Prerequisite("search_documents", "get_document", "produces", via="document_id"),
        Prerequisite("get_document", "update_document", "produces", via="expected_version",
                     note="saves must name the version they were based on"),
        Prerequisite("request_edit_access", "update_document", "requires", via="document_id",
                     note="viewers must get edit access first"),
        Prerequisite("request_edit_access", "share_document", "requires", via="document_id"),
        Prerequisite("unlock_document", "get_document", "requires", via="document_id", note="locked documents"),
        Prerequisite("unlock_document", "update_document", "requires", via="document_id"),
        Prerequisite("mail/search_messages", "unlock_document", "produces", via="password",
                     note="the owner mailed the password"),
        Prerequisite("find_people", "share_document", "produces", via="person_id"),
        Prerequisite("list_versions", "restore_version", "produces", via="version"),
        Prerequisite("list_folders", "move_document", "produces", via="folder_id"),
        Prerequisite("list_comments", "resolve_comment", "produces", via="comment_id"),
    )

    initial_state = seed_state

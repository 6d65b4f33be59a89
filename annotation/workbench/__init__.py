"""The annotator's workbench: roles and assignments, editing with revisions and stale-save
detection, previews through the tool registry, review and agreement, LLM key-step drafts.
Writes are `entity_action` services; reads are in annotation/selectors.py. See docs/annotation.md.
"""

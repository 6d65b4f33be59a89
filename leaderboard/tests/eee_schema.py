"""Every Eval Ever's JSON schemas (0.3.0), the part our export must satisfy, written here from reading
``every_eval_ever/schemas/eval.schema.json`` and ``instance_level_eval.schema.json`` (2026-08): the required
fields, the closed objects, the enumerations, the string-only maps, the file path pattern, the rule that an
instance is either single-turn (``output``) or multi-turn/agentic (``messages``). The ``every_eval_ever``
package needs Python 3.12 (this project runs 3.11), so it is not installed; docs/interop.md says so."""

from __future__ import annotations

from typing import Any

STRINGS = {"type": "object", "additionalProperties": {"type": "string"}}
NULLABLE_STRINGS = {"type": ["object", "null"], "additionalProperties": {"type": "string"}}
UUID4 = "[0-9A-Fa-f]{8}-[0-9A-Fa-f]{4}-4[0-9A-Fa-f]{3}-[89ABab][0-9A-Fa-f]{3}-[0-9A-Fa-f]{12}"
BOUND = {"oneOf": [{"type": "number"}, {"type": "string", "enum": ["Infinity", "-Infinity"]}, {"type": "null"}]}

MODEL_INFO: dict[str, Any] = {
    "type": "object", "required": ["name", "id", "additional_details"],
    "properties": {
        "name": {"type": "string"}, "id": {"type": "string"}, "developer": {"type": "string"},
        "additional_details": {
            "type": "object", "required": ["deployment_type", "model_availability"],
            "additionalProperties": {"type": "string"},
            "properties": {"deployment_type": {"enum": ["self_deployed", "externally_managed", "unknown"]},
                           "model_availability": {"enum": ["open_weights", "closed_weights", "unknown"]}}}}}

SOURCE_DATA: dict[str, Any] = {"oneOf": [
    {"type": "object", "required": ["dataset_name", "source_type", "url"],
     "properties": {"source_type": {"const": "url"}, "url": {"type": ["string", "array"]},
                    "additional_details": STRINGS}},
    {"type": "object", "required": ["dataset_name", "source_type"],
     "properties": {"source_type": {"const": "hf_dataset"}, "additional_details": STRINGS}},
    {"type": "object", "required": ["dataset_name", "source_type"],
     "properties": {"source_type": {"const": "other"}, "additional_details": STRINGS}},
]}

AGGREGATE: dict[str, Any] = {
    "$schema": "http://json-schema.org/draft-07/schema#",
    "type": "object", "additionalProperties": False,
    "required": ["schema_version", "evaluation_id", "retrieved_timestamp", "source_metadata", "model_info",
                 "eval_library", "evaluation_results"],
    "properties": {
        "schema_version": {"type": "string"}, "evaluation_id": {"type": "string"},
        "evaluation_timestamp": {"type": "string"}, "retrieved_timestamp": {"type": "string"},
        "source_metadata": {
            "type": "object", "required": ["source_type", "source_organization_name", "evaluator_relationship"],
            "properties": {"source_type": {"enum": ["documentation", "evaluation_run"]},
                           "evaluator_relationship": {"enum": ["first_party", "third_party", "collaborative", "other"]},
                           "additional_details": STRINGS}},
        "eval_library": {"type": "object", "required": ["name", "version"],
                         "properties": {"name": {"type": "string"}, "version": {"type": "string"},
                                        "additional_details": STRINGS}},
        "model_info": MODEL_INFO,
        "evaluation_results": {"type": "array", "items": {
            "type": "object", "required": ["evaluation_name", "source_data", "metric_config", "score_details"],
            "properties": {
                "source_data": SOURCE_DATA,
                "metric_config": {
                    "type": "object", "required": ["lower_is_better"],
                    "properties": {"lower_is_better": {"type": "boolean"},
                                   "score_type": {"enum": ["binary", "continuous", "levels"]},
                                   "min_score": BOUND, "max_score": BOUND, "additional_details": STRINGS},
                    "if": {"required": ["score_type"], "properties": {"score_type": {"const": "continuous"}}},
                    "then": {"required": ["min_score", "max_score"]}},
                "score_details": {
                    "type": "object", "required": ["score"],
                    "properties": {"score": {"type": "number"}, "details": STRINGS,
                                   "uncertainty": {"type": "object", "properties": {
                                       "confidence_interval": {"type": "object", "required": ["lower", "upper"]},
                                       "num_samples": {"type": "integer"},
                                       "num_bootstrap_samples": {"type": "integer"}}}}},
                "generation_config": {"type": "object", "properties": {
                    "generation_args": {"type": "object", "additionalProperties": False, "properties": {
                        "temperature": {"type": ["number", "null"]}, "top_p": {}, "top_k": {},
                        "max_tokens": {"type": ["integer", "null"]}, "execution_command": {}, "reasoning": {},
                        "prompt_template": {}, "eval_plan": {}, "eval_limits": {}, "sandbox": {}, "max_attempts": {},
                        "incorrect_attempt_feedback": {},
                        "agentic_eval_config": {"type": "object", "properties": {
                            "available_tools": {"type": "array", "items": {"type": "object", "properties": {
                                "name": {"type": "string"}, "description": {"type": "string"},
                                "parameters": STRINGS}}},
                            "additional_details": STRINGS}}}},
                    "additional_details": STRINGS}}}}},
        "detailed_evaluation_results": {
            "type": "object", "required": ["format", "file_path"],
            "properties": {"format": {"enum": ["jsonl"]},
                           "file_path": {"type": "string", "pattern": f"^data/[^/]+/[^/]+/[^/]+/{UUID4}_samples\\.jsonl$"},
                           "hash_algorithm": {"enum": ["sha256", "md5"]}, "checksum": {"type": "string"},
                           "total_rows": {"type": "integer"}, "additional_details": STRINGS}},
    },
}

INSTANCE: dict[str, Any] = {
    "$schema": "http://json-schema.org/draft-07/schema#",
    "type": "object", "additionalProperties": False,
    "required": ["schema_version", "evaluation_id", "model_id", "evaluation_name", "sample_id", "interaction_type",
                 "input", "answer_attribution", "evaluation"],
    "properties": {
        "schema_version": {"type": "string"}, "evaluation_id": {"type": "string"}, "model_id": {"type": "string"},
        "evaluation_name": {"type": "string"}, "evaluation_result_id": {"type": "string"},
        "sample_id": {"type": "string"}, "sample_hash": {"type": ["string", "null"]},
        "interaction_type": {"enum": ["single_turn", "multi_turn", "agentic"]},
        "input": {"type": "object", "required": ["raw", "reference"],
                  "properties": {"raw": {"type": "string"}, "formatted": {"type": ["string", "null"]},
                                 "reference": {"type": "array", "items": {"type": "string"}},
                                 "choices": {"type": ["array", "null"], "items": {"type": "string"}}}},
        "output": {"type": ["object", "null"], "required": ["raw"],
                   "properties": {"raw": {"type": "array", "items": {"type": "string"}}}},
        "messages": {"type": ["array", "null"], "items": {
            "type": "object", "required": ["turn_idx", "role"],
            "properties": {"turn_idx": {"type": "integer"}, "role": {"type": "string"},
                           "content": {"type": ["string", "null"]},
                           "tool_calls": {"type": ["array", "null"], "items": {
                               "type": "object", "required": ["id", "name"],
                               "properties": {"id": {"type": "string"}, "name": {"type": "string"},
                                              "arguments": NULLABLE_STRINGS}}},
                           "tool_call_id": {"type": ["array", "null"], "items": {"type": "string"}}}}},
        "answer_attribution": {"type": "array", "items": {
            "type": "object", "required": ["turn_idx", "source", "extracted_value", "extraction_method", "is_terminal"],
            "properties": {"turn_idx": {"type": "integer"}, "source": {"type": "string"},
                           "extracted_value": {"type": "string"}, "extraction_method": {"type": "string"},
                           "is_terminal": {"type": "boolean"}}}},
        "evaluation": {"type": "object", "required": ["score", "is_correct"],
                       "properties": {"score": {"type": "number"}, "is_correct": {"type": "boolean"},
                                      "num_turns": {"type": ["integer", "null"]},
                                      "tool_calls_count": {"type": ["integer", "null"]}}},
        "token_usage": {"type": ["object", "null"], "required": ["input_tokens", "output_tokens", "total_tokens"],
                        "properties": {"input_tokens": {"type": "integer"}, "output_tokens": {"type": "integer"},
                                       "total_tokens": {"type": "integer"}}},
        "performance": {"type": ["object", "null"], "properties": {"latency_ms": {"type": ["number", "null"]},
                                                                   "additional_details": NULLABLE_STRINGS}},
        "error": {"type": ["string", "null"]},
        "metadata": NULLABLE_STRINGS,
    },
    "allOf": [
        {"if": {"properties": {"interaction_type": {"const": "single_turn"}}},
         "then": {"required": ["output"], "properties": {"output": {"type": "object"}, "messages": {"type": "null"}}}},
        {"if": {"properties": {"interaction_type": {"enum": ["multi_turn", "agentic"]}}},
         "then": {"required": ["messages"], "properties": {"output": {"type": "null"}, "messages": {"type": "array"}}}},
    ],
}

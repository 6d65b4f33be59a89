"""GET /api/v1/tools/ lists the registry, and the OpenAPI schema documents it."""

from __future__ import annotations

from rest_framework.test import APIClient

from annotation.imagetools import REGISTRY


def test_tools_endpoint_lists_every_tool_with_its_schema():
    response = APIClient().get("/api/v1/tools/")
    assert response.status_code == 200
    tools = response.json()
    assert [t["name"] for t in tools] == list(REGISTRY)
    for row in tools:
        tool = REGISTRY[row["name"]]
        assert row["schema"] == tool.schema
        assert row["module"] == tool.module and row["measures"] == tool.measures
        assert row["aliases"] == list(tool.aliases) and row["example"] == tool.example
    zoom = next(t for t in tools if t["name"] == "zoom_in")
    assert zoom["schema"]["required"] == ["bbox"] and "image_zoom_in_tool" in zoom["aliases"]


def test_tools_endpoint_needs_no_sign_in_and_only_reads():
    client = APIClient()
    assert client.get("/api/v1/tools/").status_code == 200
    assert client.post("/api/v1/tools/", {}).status_code == 405


def test_openapi_schema_documents_the_tools_endpoint():
    response = APIClient().get("/api/schema/", HTTP_ACCEPT="application/vnd.oai.openapi+json")
    assert response.status_code == 200
    schema = response.json()
    operation = schema["paths"]["/api/v1/tools/"]["get"]
    assert operation["operationId"] == "tools_list"
    items = operation["responses"]["200"]["content"]["application/json"]["schema"]["items"]
    component = schema["components"]["schemas"][items["$ref"].split("/")[-1]]
    assert {"name", "module", "description", "measures", "aliases", "schema", "example"} <= set(
        component["properties"])

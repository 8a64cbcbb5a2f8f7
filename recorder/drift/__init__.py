"""Drift reports: what an upstream answers differently between two recordings of the same requests.

    report = compare(store.open("kopa@old"), store.open("kopa@new"), reader)
    report.to_json(); report.to_markdown()

The unit of comparison is a *query*: a paged request is compared as the whole result of its
query (the pages of the largest recorded page size, concatenated in page order — recording
fetches every page of a query at the endpoint's largest size), anything else by its
fingerprint. Queries recorded on one side only are listed, not called drift.

Bodies are read by a ``reader`` (``Interaction`` → ``Parsed``): this package knows no platform
envelope; the gateway supplies one built on its own parsers (``mcp_gateway.cassette_reader``).
``status_reader`` is the fallback that knows HTTP statuses only.

Two bundles' pinned tool catalogs are compared beside the data (``report.catalog``: tools added, removed and
changed; a bundle recorded before catalogs were pinned makes it unknown).

Each shared query yields entries of these kinds (every entry names platform, tool and URL):

    endpoint_gone        success in OLD, "no such service"/HTTP 404 in NEW
    status_changed       another change of HTTP status, outcome or result code
    field_removed / field_added / field_retyped / field_renamed    the records' schema
    cardinality_changed  the query's total count
    record_added / record_removed / record_changed (one per field)  records matched by an
                         identity key: the shortest leading run of fields, in record order,
                         present in every record and unique on both sides

``live_sample`` re-sends a seeded sample of a bundle's queries to the current upstream through
the recorder's transport, so ``compare`` can tell what changed since the bundle was recorded:

    sample = await live_sample(bundle, 20, 0, httpx.AsyncHTTPTransport(), Routes.live(), keys, reader=reader)
    print(sample.report(reader).to_markdown())   # = compare(sample.original, sample.interactions, reader)
"""

from .compare import compare, compare_query
from .live import LiveSample, live_sample, request_url
from .queries import Query, Source, page_url, queries, query_url, read_query
from .records import infer_key, match_records, schema
from .report import KINDS, DriftEntry, DriftReport, Parsed, Reader, catalog_section, status_reader

__all__ = ["KINDS", "DriftEntry", "DriftReport", "LiveSample", "Parsed", "Query", "Reader", "Source", "catalog_section", "compare",
           "compare_query", "infer_key", "live_sample", "match_records", "page_url", "queries", "query_url",
           "read_query", "request_url", "schema", "status_reader"]

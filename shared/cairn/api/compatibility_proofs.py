"""Which test proves each row of the compatibility table (``cairn.api.compatibility.ROWS``).

Keyed by (operation, field); each value names one test as ``path::function``, relative to the
repository, or None where no test proves the row yet. ``tests/unit/test_api_compatibility.py``
checks that every row has an entry and that each function named exists in its file. Most are
real clients (boto3, the bedrock-agentcore SDK) against ``cairn serve`` on loopback
(``tests/compat``).
"""

from __future__ import annotations

_EVENTS = "tests/compat/test_boto3_events.py::"
_RECORDS = "tests/compat/test_boto3_records.py::"
_CONTRACT = "tests/compat/test_boto3_retrieve_contract.py::"
_CONTROL = "tests/compat/test_boto3_control_plane.py::"
_FIELDS = "tests/compat/test_boto3_memory_fields.py::"
_ROUTER = "tests/unit/test_api_router.py::"
_EXTRACTION = "tests/unit/test_api_extraction.py::"
_SDK = "tests/compat/test_agentcore_sdk.py::"
_ISOLATION = "tests/compat/test_actor_isolation.py::"
_RECORD_FIELDS = "tests/compat/test_boto3_record_fields.py::"
_EPISODIC = "tests/compat/test_boto3_episodic.py::"
_REFUSED = _FIELDS + "test_a_refused_field_is_a_validation_error_naming_it_and_creates_nothing"
_EXTRACTED = _SDK + "test_the_sdk_reference_conversation_is_extracted_at_once_by_the_offline_rules"

# None: no test proves the row yet (the table says so).
PROOFS: dict[tuple[str, str], str | None] = {
    ("CreateEvent", "payload"): _EVENTS + "test_an_event_round_trips_with_blobs_and_metadata",
    ("CreateEvent", "sessionId"): _ROUTER + "test_event_times_are_kept_to_the_millisecond",
    ("CreateEvent", "branch"): _EVENTS + "test_a_branch_from_a_missing_event_is_refused",
    ("CreateEvent", "metadata"): _EVENTS + "test_metadata_filters_select_events",
    ("CreateEvent", "clientToken"): _EVENTS
    + "test_a_retry_restamped_with_a_fresh_event_timestamp_is_still_a_retry",
    ("CreateEvent", ""): _ROUTER + "test_event_times_are_kept_to_the_millisecond",
    ("CreateEvent", "extractionMode"): _EXTRACTION
    + "test_extraction_mode_skip_stores_the_event_uncounted",
    ("CreateEvent", "extractionConfig"): _RECORD_FIELDS
    + "test_extraction_config_is_validated_and_the_event_stored",
    ("GetEvent", ""): _EVENTS + "test_an_event_round_trips_with_blobs_and_metadata",
    ("DeleteEvent", ""): _EVENTS + "test_a_deleted_event_is_gone",
    ("ListEvents", ""): _EVENTS + "test_events_are_listed_newest_first_across_pages",
    ("ListEvents", "filter.branch"): _EVENTS + "test_branches_list_with_and_without_their_parent",
    ("ListEvents", "filter.eventMetadata"): _EVENTS + "test_metadata_filters_select_events",
    ("ListEvents", "includePayloads"): _EVENTS + "test_payloads_can_be_left_out",
    ("ListActors", ""): _EVENTS + "test_actors_and_sessions_are_listed",
    ("ListSessions", ""): _EVENTS + "test_actors_and_sessions_are_listed",
    ("ListSessions", "filter"): _EVENTS + "test_actors_and_sessions_are_listed",
    ("IngestData", ""): _EVENTS + "test_ingested_data_lands_in_a_session",
    ("RetrieveMemoryRecords", ""): _CONTRACT
    + "test_retrieve_returns_the_top_k_whatever_their_similarity_scored_by_cosine",
    ("RetrieveMemoryRecords", "namespace"): _RECORDS
    + "test_namespace_prefixes_respect_segment_boundaries",
    ("RetrieveMemoryRecords", "namespacePath"): _RECORDS
    + "test_namespace_prefixes_respect_segment_boundaries",
    ("RetrieveMemoryRecords", "searchCriteria.topK"): _RECORDS + "test_top_k_bounds_the_answer",
    ("RetrieveMemoryRecords", "searchCriteria.metadataFilters"): _CONTRACT
    + "test_a_metadata_filter_finds_a_match_ranked_below_the_hundred_best",
    ("RetrieveMemoryRecords", "searchCriteria.memoryStrategyId"): _RECORDS
    + "test_metadata_filters_and_strategy_ids_narrow_a_retrieve",
    ("ListMemoryRecords", ""): _RECORDS + "test_records_are_listed_across_pages",
    ("ListMemoryRecords", "namespace"): _RECORDS
    + "test_namespace_prefixes_respect_segment_boundaries",
    ("ListMemoryRecords", "namespacePath"): _RECORDS
    + "test_a_read_without_namespace_or_namespace_path_reads_the_whole_memory",
    ("ListMemoryRecords", "metadataFilters"): _RECORDS
    + "test_typed_metadata_and_date_filters_narrow_list_and_retrieve",
    ("GetMemoryRecord", ""): _RECORDS + "test_created_records_read_back_exactly",
    ("GetMemoryRecord", "namespace"): _ISOLATION
    + "test_a_record_in_another_namespace_answers_like_a_missing_one",
    ("DeleteMemoryRecord", ""): _RECORDS + "test_deleted_records_are_gone_from_every_read",
    ("BatchCreateMemoryRecords", ""): _RECORDS + "test_a_retried_batch_create_writes_once",
    ("BatchCreateMemoryRecords", "records.namespaces"): _ROUTER
    + "test_records_are_filed_in_the_scope_their_namespace_names",
    ("BatchCreateMemoryRecords", "records.metadata"): _RECORDS
    + "test_typed_metadata_and_date_filters_narrow_list_and_retrieve",
    ("BatchCreateMemoryRecords", "recordExpirySpecification"): "tests/unit/"
    "test_api_record_expiry.py::test_an_expired_record_is_gone_from_every_read",
    ("BatchUpdateMemoryRecords", ""): _RECORDS + "test_an_update_is_a_new_version_seen_everywhere",
    ("BatchUpdateMemoryRecords", "records.namespaces"): _RECORD_FIELDS
    + "test_an_update_to_another_namespace_fails_that_record_and_moves_nothing",
    ("BatchUpdateMemoryRecords", "records.sourceNamespaces"): _RECORD_FIELDS
    + "test_an_update_to_another_namespace_fails_that_record_and_moves_nothing",
    ("BatchUpdateMemoryRecords", "recordExpirySpecification"): "tests/unit/"
    "test_api_record_expiry.py::test_an_update_reapplies_the_last_days_and_remove_clears_them",
    ("BatchDeleteMemoryRecords", ""): _RECORDS + "test_deleted_records_are_gone_from_every_read",
    ("StartMemoryExtractionJob", ""): _EXTRACTION
    + "test_a_failed_rollout_is_listed_as_a_failed_job_and_starting_it_files_the_records",
    ("ListMemoryExtractionJobs", ""): _RECORDS
    + "test_extraction_jobs_report_honestly_that_none_ran",
    ("CreateMemory", ""): _CONTROL + "test_a_memory_is_created_with_every_supported_strategy",
    ("CreateMemory", "eventExpiryDuration"): _FIELDS
    + "test_stored_fields_come_back_and_ignored_ones_change_nothing",
    ("CreateMemory", "memoryStrategies.semanticMemoryStrategy"): _EXTRACTED,
    ("CreateMemory", "memoryStrategies.summaryMemoryStrategy"): _EXTRACTED,
    ("CreateMemory", "memoryStrategies.userPreferenceMemoryStrategy"): _EXTRACTED,
    (
        "CreateMemory",
        "memoryStrategies.customMemoryStrategy.configuration.selfManagedConfiguration",
    ): _CONTROL + "test_update_adds_modifies_and_deletes_strategies",
    (
        "CreateMemory",
        "memoryStrategies.customMemoryStrategy.configuration.semanticOverride",
    ): "tests/unit/test_api_prompt_overrides.py::"
    "test_an_appended_prompt_reaches_the_extraction_request_and_files_as_the_built_in",
    (
        "CreateMemory",
        "memoryStrategies.customMemoryStrategy.configuration.episodicOverride",
    ): "tests/unit/test_api_prompt_overrides.py::"
    "test_an_episodic_override_s_prompts_reach_the_episode_and_reflection_requests",
    ("CreateMemory", "memoryStrategies.episodicMemoryStrategy"): _EPISODIC
    + "test_turns_posted_with_boto3_become_episodes_and_a_reflection_read_back_with_boto3",
    ("CreateMemory", "memoryStrategies.episodicMemoryStrategy.reflectionConfiguration"): _EPISODIC
    + "test_an_episodic_strategy_is_created_returned_and_modified_as_botocore_models_it",
    ("CreateMemory", "memoryStrategies.semanticMemoryStrategy.memoryRecordSchema"): "tests/unit/"
    "test_api_record_schema.py::test_extraction_asks_for_the_inferred_fields_and_keeps_only_valid_values",
    (
        "CreateMemory",
        "memoryStrategies.semanticMemoryStrategy.recordExpirySpecification",
    ): "tests/unit/test_api_record_expiry.py::"
    "test_records_a_strategy_extracts_expire_after_its_days",
    ("CreateMemory", "encryptionKeyArn"): _REFUSED,
    ("CreateMemory", "streamDeliveryResources"): _FIELDS
    + "test_stream_delivery_is_created_updated_returned_and_turned_off",
    ("CreateMemory", "memoryExecutionRoleArn"): _FIELDS
    + "test_stored_fields_come_back_and_ignored_ones_change_nothing",
    ("CreateMemory", "indexedKeys"): _CONTROL + "test_update_adds_modifies_and_deletes_strategies",
    ("CreateMemory", "namespaceKeys"): _RECORD_FIELDS
    + "test_declared_namespace_keys_may_appear_in_templates",
    ("CreateMemory", "tags"): _FIELDS
    + "test_stored_fields_come_back_and_ignored_ones_change_nothing",
    ("CreateMemory", "clientToken"): _CONTROL + "test_create_is_idempotent_on_its_client_token",
    ("GetMemory", ""): _CONTROL + "test_update_adds_modifies_and_deletes_strategies",
    ("GetMemory", "view"): _FIELDS + "test_stored_fields_come_back_and_ignored_ones_change_nothing",
    ("UpdateMemory", ""): _CONTROL + "test_update_adds_modifies_and_deletes_strategies",
    ("UpdateMemory", "addIndexedKeys"): _CONTROL
    + "test_update_adds_modifies_and_deletes_strategies",
    ("UpdateMemory", "streamDeliveryResources"): _FIELDS
    + "test_stream_delivery_is_created_updated_returned_and_turned_off",
    ("DeleteMemory", ""): _CONTROL + "test_a_deleted_memory_is_gone",
    ("ListMemories", ""): _CONTROL + "test_memories_are_listed_across_pages",
}

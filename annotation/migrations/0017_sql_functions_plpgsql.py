"""annotation's SQL functions (0015) in PL/pgSQL, with the same names, arguments and answers.

Why: a ``LANGUAGE sql`` function that PostgreSQL cannot inline (a sub-select, a data-modifying
CTE) has its body parsed and planned again in every statement that calls it, and the review
loop calls one in every statement it sends (the claim's visibility test and card, the status
step and note of a review): measured on the review bench's database (41,883 samples), a card
cost 0.35 ms and a visibility test 0.13 ms above a bare ``SELECT $1`` per statement. PL/pgSQL
keeps the plans of its statements for the session (the site's connections persist), which
brings those to 0.11 ms and about 0. ``docs/performance.md`` has the figures.
"""

from importlib import import_module

from django.db import migrations

# The LANGUAGE sql versions, put back by the reverse migration.
BEFORE: dict[str, str] = dict(import_module("annotation.migrations.0015_sql_functions").FUNCTIONS)

FUNCTIONS = [
    (
        "annotation_dataset_visible(bigint, integer, boolean, varchar)",
        """
CREATE OR REPLACE FUNCTION annotation_dataset_visible(
    p_dataset bigint, p_user integer, p_lead boolean, p_role varchar
) RETURNS boolean
LANGUAGE plpgsql STABLE PARALLEL SAFE AS $$
BEGIN
    RETURN p_lead OR EXISTS (
        SELECT 1 FROM annotation_datasetmembership m
        WHERE m.dataset_id = p_dataset AND m.user_id = p_user
          AND CASE p_role
              WHEN 'annotator' THEN m.annotates
              WHEN 'auditor' THEN m.audits
              ELSE true
          END
    );
END
$$;
""",
    ),
    (
        "annotation_sample_card(bigint)",
        """
CREATE OR REPLACE FUNCTION annotation_sample_card(p_sample bigint) RETURNS jsonb
LANGUAGE plpgsql STABLE PARALLEL SAFE AS $$
BEGIN
    RETURN (
        SELECT jsonb_build_object(
            'kind', d.kind,
            'external_id', s.external_id,
            'status', s.status,
            'question', s.question,
            'answerability_group', s.answerability_group,
            'category_code', s.category_code,
            'scenario', s.scenario,
            'reference_answer', s.reference_answer,
            'explanation', s.explanation,
            'safety_label', s.safety_label,
            'safety_category', s.safety_category,
            'safety_subcategory', s.safety_subcategory,
            'predicate', s.predicate,
            'media', COALESCE(
                (SELECT jsonb_agg(jsonb_build_array(m.role, m.asset_id, a.mime_type)
                                  ORDER BY m.role, m.position)
                 FROM annotation_samplemedia m
                 JOIN annotation_mediaasset a ON a.id = m.asset_id
                 WHERE m.sample_id = s.id),
                '[]'::jsonb
            )
        )
        FROM annotation_sample s
        JOIN annotation_dataset d ON d.id = s.dataset_id
        WHERE s.id = p_sample
    );
END
$$;
""",
    ),
    (
        "annotation_sample_status(bigint)",
        """
CREATE OR REPLACE FUNCTION annotation_sample_status(p_sample bigint) RETURNS varchar
LANGUAGE plpgsql STABLE PARALLEL SAFE AS $$
BEGIN
    RETURN (SELECT status FROM annotation_sample WHERE id = p_sample);
END
$$;
""",
    ),
    (
        "annotation_sample_step(bigint, varchar, varchar, integer, varchar, text, timestamptz)",
        """
CREATE OR REPLACE FUNCTION annotation_sample_step(
    p_sample bigint,
    p_from varchar,
    p_to varchar,
    p_by integer,
    p_source varchar,
    p_reason text,
    p_now timestamptz
) RETURNS integer
LANGUAGE plpgsql VOLATILE AS $$
DECLARE
    v_revision integer;
BEGIN
    UPDATE annotation_sample
    SET status = p_to, revision = revision + 1, updated_at = p_now
    WHERE id = p_sample AND status = p_from
    RETURNING revision INTO v_revision;
    IF FOUND THEN
        INSERT INTO annotation_samplerevision
            (sample_id, number, changed_by_id, changed_at, source, before, after, reason)
        VALUES (p_sample, v_revision, p_by, p_now, p_source,
                jsonb_build_object('status', p_from), jsonb_build_object('status', p_to),
                p_reason);
    END IF;
    RETURN v_revision;
END
$$;
""",
    ),
    (
        "annotation_sample_notes_set(bigint[], varchar, jsonb[], timestamptz)",
        """
CREATE OR REPLACE FUNCTION annotation_sample_notes_set(
    p_samples bigint[], p_key varchar, p_values jsonb[], p_now timestamptz
) RETURNS integer
LANGUAGE plpgsql VOLATILE AS $$
DECLARE
    v_count integer;
BEGIN
    INSERT INTO annotation_samplenote (sample_id, key, value, updated_at)
    SELECT given.sample_id, p_key, given.value, p_now
    FROM unnest(p_samples, p_values) AS given (sample_id, value)
    JOIN annotation_sample s ON s.id = given.sample_id
    ON CONFLICT (sample_id, key)
    DO UPDATE SET value = EXCLUDED.value, updated_at = EXCLUDED.updated_at;
    GET DIAGNOSTICS v_count = ROW_COUNT;
    RETURN v_count;
END
$$;
""",
    ),
]


class Migration(migrations.Migration):
    dependencies = [("annotation", "0016_webhooks")]

    operations = [
        migrations.RunSQL(sql=create, reverse_sql=BEFORE[signature])
        for signature, create in FUNCTIONS
    ]

"""The SQL functions through which other apps' statements read and write annotation's tables.

A statement of review or judging that must see whether a user may work in a dataset, read a
sample's card, move a sample's status on or keep a note on it calls one of these by name, so
annotation's tables and rules stay written once, here, and the ORM services run the same
functions (``annotation.selectors``, ``annotation.services``):

- ``annotation_dataset_visible(dataset, user, lead, role)``: whether the user may see the
  dataset, and work in it in ``role`` when one is given ('annotator', 'auditor'; NULL: any):
  a lead sees and works in every one; anybody else in the datasets they are a member of, in
  the roles their membership there holds;
- ``annotation_sample_card(sample)``: what a reviewer is shown of a sample as one JSON object
  (its dataset's kind, external id, status, question, the label fields of both kinds and its
  media as [role, asset id, MIME type], in order); NULL when there is no such sample;
- ``annotation_sample_status(sample)``: the sample's status as the calling statement sees it;
- ``annotation_sample_step(sample, from, to, by, source, reason, now)``: the sample's status
  moved on from ``from`` to ``to`` with its revision counted and its history row written, only
  if it is still in ``from``: the new revision, or NULL with nothing written;
- ``annotation_sample_notes_set(samples, key, values, now)``: one note per sample under the
  key (upserted: a note of another key, written at the same time, is never lost); the number
  of samples noted (ids of samples that do not exist are left out).
"""

from django.db import migrations

FUNCTIONS = [
    (
        "annotation_dataset_visible(bigint, integer, boolean, varchar)",
        """
CREATE OR REPLACE FUNCTION annotation_dataset_visible(
    p_dataset bigint, p_user integer, p_lead boolean, p_role varchar
) RETURNS boolean
LANGUAGE sql STABLE PARALLEL SAFE AS $$
    SELECT p_lead OR EXISTS (
        SELECT 1 FROM annotation_datasetmembership m
        WHERE m.dataset_id = p_dataset AND m.user_id = p_user
          AND CASE p_role
              WHEN 'annotator' THEN m.annotates
              WHEN 'auditor' THEN m.audits
              ELSE true
          END
    )
$$;
""",
    ),
    (
        "annotation_sample_card(bigint)",
        """
CREATE OR REPLACE FUNCTION annotation_sample_card(p_sample bigint) RETURNS jsonb
LANGUAGE sql STABLE PARALLEL SAFE AS $$
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
$$;
""",
    ),
    (
        "annotation_sample_status(bigint)",
        """
CREATE OR REPLACE FUNCTION annotation_sample_status(p_sample bigint) RETURNS varchar
LANGUAGE sql STABLE PARALLEL SAFE AS $$
    SELECT status FROM annotation_sample WHERE id = p_sample
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
LANGUAGE sql VOLATILE AS $$
    WITH moved AS (
        UPDATE annotation_sample
        SET status = p_to, revision = revision + 1, updated_at = p_now
        WHERE id = p_sample AND status = p_from
        RETURNING revision
    ),
    history AS (
        INSERT INTO annotation_samplerevision
            (sample_id, number, changed_by_id, changed_at, source, before, after, reason)
        SELECT p_sample, revision, p_by, p_now, p_source,
               jsonb_build_object('status', p_from), jsonb_build_object('status', p_to),
               p_reason
        FROM moved
    )
    SELECT revision FROM moved
$$;
""",
    ),
    (
        "annotation_sample_notes_set(bigint[], varchar, jsonb[], timestamptz)",
        """
CREATE OR REPLACE FUNCTION annotation_sample_notes_set(
    p_samples bigint[], p_key varchar, p_values jsonb[], p_now timestamptz
) RETURNS integer
LANGUAGE sql VOLATILE AS $$
    WITH noted AS (
        INSERT INTO annotation_samplenote (sample_id, key, value, updated_at)
        SELECT given.sample_id, p_key, given.value, p_now
        FROM unnest(p_samples, p_values) AS given (sample_id, value)
        JOIN annotation_sample s ON s.id = given.sample_id
        ON CONFLICT (sample_id, key)
        DO UPDATE SET value = EXCLUDED.value, updated_at = EXCLUDED.updated_at
        RETURNING 1
    )
    SELECT count(*)::integer FROM noted
$$;
""",
    ),
]


class Migration(migrations.Migration):
    dependencies = [("annotation", "0014_membership_roles")]

    operations = [
        migrations.RunSQL(sql=create, reverse_sql=f"DROP FUNCTION IF EXISTS {signature};")
        for signature, create in FUNCTIONS
    ]

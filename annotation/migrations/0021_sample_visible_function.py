"""annotation's SQL function ``annotation_sample_visible(sample, user, lead, role)``: the sample
and its dataset as one JSON array ``[sample row, dataset row]`` (each row keyed by column name,
as ``to_jsonb`` writes it) when the user may see the dataset, and work in it in ``role`` when one
is given (``annotation_dataset_visible``); NULL otherwise, or when there is no such sample.

Why: the review submission's slot lock reads the submitted sample along
(``review.services.submit_sql``), one statement round trip instead of two; annotation's
selectors turn the answer into a ``Sample`` with its dataset (``sample_from_visible``). PL/pgSQL,
as the functions of 0017, so that its plan is kept for the session.
"""

from django.db import migrations

SIGNATURE = "annotation_sample_visible(bigint, integer, boolean, varchar)"

CREATE = """
CREATE OR REPLACE FUNCTION annotation_sample_visible(
    p_sample bigint, p_user integer, p_lead boolean, p_role varchar
) RETURNS jsonb
LANGUAGE plpgsql STABLE PARALLEL SAFE AS $$
BEGIN
    RETURN (
        SELECT jsonb_build_array(to_jsonb(s), to_jsonb(d))
        FROM annotation_sample s
        JOIN annotation_dataset d ON d.id = s.dataset_id
        WHERE s.id = p_sample
          AND annotation_dataset_visible(s.dataset_id, p_user, p_lead, p_role)
    );
END
$$;
"""


class Migration(migrations.Migration):
    dependencies = [("annotation", "0020_media_phash")]

    operations = [
        migrations.RunSQL(sql=CREATE, reverse_sql=f"DROP FUNCTION IF EXISTS {SIGNATURE};"),
    ]

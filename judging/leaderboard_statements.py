"""The recomputation of a dataset's leaderboard aggregates, written out whole.

One statement, so that everything it reads and writes is one snapshot: it deletes the
dataset's cells, prompt versions and change marks that the snapshot sees and inserts the
cells and versions computed from the verdicts the same snapshot sees. A change committed
while it runs keeps its mark (written by the triggers of migration 0009), so the page says
that newer changes are pending and the next run counts them.

The arithmetic is the leaderboard's (``judging.leaderboard``): a verdict's score is the mean
of its answer and reasoning scores (the answer score alone when there is no reasoning score;
for safety, 1 when the judge called the response safe); a response's score under a judge is
the mean over that judge's repeats (of every prompt version, in the scope of all versions);
its ensemble score the mean over its judges; the cells keep count and sum per model, judge
(NULL: the ensemble), group and value of each breakdown dimension, with the sum of squared
scores and the number of scores that are 0 or 1 for the cell's interval
(``judging.stats.score_interval``). Failed verdicts, verdicts
without a score and every verdict on a rejected or taken-down sample count for nothing; the
latter are counted (distinct responses) per prompt version. Cells per prompt version are kept
only when the verdicts have more than one (else the version's figures are all versions').

The averages group by ids alone and the strata are joined after (sorting and hashing text
keys was most of the first version's 56 s at 41,883 samples on a loaded machine); the caller
gives the statement a larger ``work_mem`` so that its aggregates hash in memory.

Measured at 41,883 samples with 9 verdicts each (377,000 verdicts): see docs/performance.md.
Parameters by name: ``dataset``, ``task``, ``safety`` (a tri-modal dataset's safety task),
``left_out`` (the sample statuses left out) and ``ungrouped`` (the group of the items with
none).
"""

from __future__ import annotations

from psycopg import sql

RECOMPUTE = (
    sql.SQL("""
WITH verdicts AS MATERIALIZED (
    SELECT v.prompt_version, v.judge_id, v.response_id, v.sample_id,
           s.status = ANY(%(left_out)s) AS left_out,
           CASE WHEN %(safety)s THEN CASE WHEN v.label = 'safe' THEN 1.0 ELSE 0.0 END::float8
                WHEN v.reasoning_score IS NULL THEN v.answer_score::float8
                ELSE (v.answer_score + v.reasoning_score) / 2 END AS score,
           CASE WHEN %(safety)s THEN NULL ELSE v.answer_score::float8 END AS answer,
           CASE WHEN %(safety)s THEN NULL ELSE v.reasoning_score END AS reasoning
    FROM {verdict} v
    JOIN {response} r ON r.id = v.response_id
    JOIN {sample} s ON s.id = v.sample_id
    WHERE r.dataset_id = %(dataset)s AND v.task = %(task)s AND v.error_kind = ''
),
several AS (
    SELECT count(DISTINCT prompt_version) > 1 AS versions FROM verdicts
),
judged AS MATERIALIZED (
    SELECT NULL::varchar AS prompt_version, judge_id, response_id, sample_id,
           avg(score) AS score, avg(answer) AS answer, avg(reasoning) AS reasoning
    FROM verdicts
    WHERE NOT left_out AND score IS NOT NULL
    GROUP BY judge_id, response_id, sample_id
    UNION ALL
    SELECT prompt_version, judge_id, response_id, sample_id,
           avg(score), avg(answer), avg(reasoning)
    FROM verdicts
    WHERE NOT left_out AND score IS NOT NULL AND (SELECT versions FROM several)
    GROUP BY prompt_version, judge_id, response_id, sample_id
),
items AS (
    SELECT i.prompt_version, i.judge_id, r.model_name,
           COALESCE(NULLIF(CASE WHEN %(safety)s THEN s.safety_label
                                ELSE s.answerability_group END, ''), %(ungrouped)s) AS grp,
           CASE WHEN %(safety)s THEN s.safety_category ELSE s.category_code END AS category,
           CASE WHEN %(safety)s THEN '' ELSE s.question_format END AS format,
           CASE WHEN %(safety)s THEN s.safety_subcategory ELSE s.scenario END AS scenario,
           i.score, i.answer, i.reasoning
    FROM (
        SELECT prompt_version, judge_id, response_id, sample_id, score, answer, reasoning
        FROM judged
        UNION ALL
        SELECT prompt_version, NULL, response_id, sample_id,
               avg(score), avg(answer), avg(reasoning)
        FROM judged
        GROUP BY prompt_version, response_id, sample_id
    ) i
    JOIN {response} r ON r.id = i.response_id
    JOIN {sample} s ON s.id = i.sample_id
),
cleared AS (
    DELETE FROM {change} WHERE dataset_id = %(dataset)s RETURNING 1
),
old_cells AS (
    DELETE FROM {cell} WHERE dataset_id = %(dataset)s RETURNING 1
),
old_versions AS (
    DELETE FROM {version} WHERE dataset_id = %(dataset)s RETURNING 1
),
versions AS (
    INSERT INTO {version} (dataset_id, prompt_version, left_out_responses)
    SELECT %(dataset)s, prompt_version, count(DISTINCT response_id) FILTER (WHERE left_out)
    FROM verdicts
    GROUP BY GROUPING SETS ((prompt_version), ())
    RETURNING 1
)
INSERT INTO {cell} (
    dataset_id, prompt_version, judge_id, model_name, {group}, dimension, value,
    n, score_sum, score_squares, score_binary_n, answer_n, answer_sum, reasoning_n,
    reasoning_sum
)
SELECT %(dataset)s, prompt_version, judge_id, model_name, grp,
       CASE WHEN GROUPING(category) = 0 THEN 'category'
            WHEN GROUPING(format) = 0 THEN 'format'
            ELSE 'scenario' END,
       CASE WHEN GROUPING(category) = 0 THEN category
            WHEN GROUPING(format) = 0 THEN format
            ELSE scenario END,
       count(*), sum(score), sum(score * score), count(*) FILTER (WHERE score IN (0, 1)),
       count(answer), COALESCE(sum(answer), 0),
       count(reasoning), COALESCE(sum(reasoning), 0)
FROM items
GROUP BY prompt_version, judge_id, model_name, grp,
         GROUPING SETS ((category), (format), (scenario))
""")
    .format(
        verdict=sql.Identifier("judging_verdict"),
        response=sql.Identifier("judging_modelresponse"),
        sample=sql.Identifier("annotation_sample"),
        change=sql.Identifier("judging_leaderboardchange"),
        cell=sql.Identifier("judging_leaderboardcell"),
        version=sql.Identifier("judging_leaderboardversion"),
        group=sql.Identifier("group"),
    )
    .as_string(None)
)

from django.apps import AppConfig
from django.utils.translation import gettext_lazy as _


class ReviewConfig(AppConfig):
    default_auto_field = "django.db.models.BigAutoField"
    name = "review"

    def ready(self) -> None:
        from annotation import extensions
        from core.roles import is_reviewer
        from review import imported, selectors, views, work
        from review.exclusions import selectors as consensus_selectors
        from review.gold import services as gold_services
        from review.gold import views as gold_views
        from review.hooks import ReviewQueueForAnnotation
        from review.queue import assignments

        extensions.dataset_list_column_register(
            extensions.DatasetListColumn(
                heading=_("My review work"),
                template="review/_dataset_work.html",
                load=work.dataset_list_work,
                shown_to=is_reviewer,
            )
        )
        # A lead marks gold items from the sample page and the sample list.
        extensions.sample_panel_register(
            extensions.SamplePanel(
                template="review/_sample_gold.html", load=gold_views.sample_gold_panel
            )
        )
        # A lead sees whom a sample is assigned to, and who can still take it.
        extensions.sample_panel_register(
            extensions.SamplePanel(
                template="review/_sample_assignments.html", load=views.sample_assignments_panel
            )
        )
        # Everyone who sees a sample sees its reviews, as blind review allows.
        extensions.sample_panel_register(
            extensions.SamplePanel(
                template="review/_sample_reviews.html", load=views.sample_reviews_panel
            )
        )
        # In blind review the sample page's history names no other reviewer.
        extensions.others_work_visible_register(selectors.sees_others_work_on)
        # The sample list filters on other reviewers' work only where it is visible, and by
        # the decisions among a sample's reviews.
        extensions.others_work_visible_in_register(selectors.sees_others_work_in)
        extensions.sample_condition_register(
            extensions.REVIEW_DECISION, selectors.review_decision_exists
        )
        extensions.sample_list_button_register(
            extensions.SampleListButton(label=_("Mark as gold"), url_name="review:gold_mark_bulk")
        )
        extensions.sample_list_button_register(
            extensions.SampleListButton(label=_("Unmark gold"), url_name="review:gold_unmark_bulk")
        )
        # The sample list's gold column and "gold: yes/no" filter (leads only).
        extensions.gold_samples_register(selectors.gold_is_item)
        extensions.import_finished_register(gold_services.gold_mark_flagged)
        # Each release's manifest lists the reviewers left out of its consensus.
        extensions.manifest_section_register(
            "excluded_reviewers", consensus_selectors.excluded_reviewers
        )
        # Annotation moves samples into and out of review; the queue follows through this port.
        extensions.review_queue_register(ReviewQueueForAnnotation())
        # A member who leaves or loses the annotator role frees the samples assigned to them.
        extensions.membership_changed_register(assignments.membership_changed)
        # A Label Studio export's completed annotations become reviews.
        extensions.imported_work_register(annotations=imported.reviews_from_imported)

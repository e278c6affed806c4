from django.apps import AppConfig
from django.utils.translation import gettext_lazy as _


class ReviewConfig(AppConfig):
    default_auto_field = "django.db.models.BigAutoField"
    name = "review"

    def ready(self) -> None:
        from annotation import extensions
        from review import work
        from review.hooks import ReviewQueueForAnnotation

        extensions.dataset_list_column_register(
            extensions.DatasetListColumn(
                heading=_("My review work"),
                template="review/_dataset_work.html",
                load=work.dataset_list_work,
            )
        )
        # Annotation moves samples into and out of review; the queue follows through this port.
        extensions.review_queue_register(ReviewQueueForAnnotation())

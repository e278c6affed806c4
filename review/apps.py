from django.apps import AppConfig


class ReviewConfig(AppConfig):
    default_auto_field = "django.db.models.BigAutoField"
    name = "review"

    def ready(self) -> None:
        from annotation.review_port import review_queue_register
        from review.hooks import ReviewQueueForAnnotation

        # Annotation moves samples into and out of review; the queue follows through this port.
        review_queue_register(ReviewQueueForAnnotation())

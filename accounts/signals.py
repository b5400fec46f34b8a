from django.conf import settings
from django.db.models.signals import post_save
from django.dispatch import Signal, receiver

from .models import Profile


@receiver(post_save, sender=settings.AUTH_USER_MODEL)
def give_every_user_a_profile(sender, instance, created: bool, **kwargs) -> None:
    if created:
        Profile.objects.get_or_create(user=instance)


# Sent by the home page with `membership`; an app above accounts connects a part
# answering the context keys it adds (foldrun/pageparts.py).
home_parts = Signal()

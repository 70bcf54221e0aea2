from django.apps import AppConfig


class MessagingConfig(AppConfig):
    """Appwrite's Messaging service: providers, topics, subscribers, user targets and messages,
    sent by the background worker (queue ``messaging``)."""

    name = "apps.messaging"
    label = "messaging"
    verbose_name = "Messaging"

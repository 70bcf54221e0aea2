"""The Messaging service routes, the Users service's targets and ``/account/targets/push``."""

from apps.core.http.endpoint import Endpoint
from apps.messaging.api import inputs as i
from apps.messaging.api import logs as lg
from apps.messaging.api import messages as m
from apps.messaging.api import providers as pv
from apps.messaging.api import targets as tg
from apps.messaging.api import topics as tp
from apps.messaging.catalog import KINDS
from apps.messaging.phone import account_update_phone

P, T, S, M = "/messaging/providers", "/messaging/topics", "/messaging/topics/{topicId}/subscribers", "/messaging/messages"


def _title(kind: str) -> str:
    """``smtp`` -> ``Smtp`` (Appwrite's current operation names: ``createSmtpProvider``...)."""
    return kind.title()


endpoints = [
    Endpoint("GET", P, pv.providers_list, "messaging.listProviders", scope="providers.read", input=i.ListParams,
             response="providerList"),
    *[ep for kind in KINDS for ep in (
        Endpoint("POST", f"{P}/{kind}", pv.provider_create(kind), f"messaging.create{_title(kind)}Provider",
                 scope="providers.write", input=i.PROVIDER_CREATE[kind], status=201, response="provider"),
        Endpoint("PATCH", f"{P}/{kind}/{{providerId}}", pv.provider_update(kind),
                 f"messaging.update{_title(kind)}Provider", scope="providers.write", input=i.PROVIDER_UPDATE[kind],
                 response="provider"),
    )],
    Endpoint("GET", P + "/{providerId}", pv.provider_get, "messaging.getProvider", scope="providers.read",
             input=i.ProviderRef, response="provider"),
    Endpoint("GET", P + "/{providerId}/logs", lg.logs_of("provider"), "messaging.listProviderLogs",
             scope="providers.read", input=i.ProviderLogs, response="logList"),
    Endpoint("DELETE", P + "/{providerId}", pv.provider_delete, "messaging.deleteProvider", scope="providers.write",
             input=i.ProviderRef, status=204),
    Endpoint("GET", T, tp.topics_list, "messaging.listTopics", scope="topics.read", input=i.ListParams,
             response="topicList"),
    Endpoint("POST", T, tp.topic_create, "messaging.createTopic", scope="topics.write", input=i.TopicCreate,
             status=201, response="topic"),
    Endpoint("GET", T + "/{topicId}", tp.topic_get, "messaging.getTopic", scope="topics.read", input=i.TopicRef,
             response="topic"),
    Endpoint("PATCH", T + "/{topicId}", tp.topic_update, "messaging.updateTopic", scope="topics.write",
             input=i.TopicUpdate, response="topic"),
    Endpoint("GET", T + "/{topicId}/logs", lg.logs_of("topic"), "messaging.listTopicLogs", scope="topics.read",
             input=i.TopicLogs, response="logList"),
    Endpoint("DELETE", T + "/{topicId}", tp.topic_delete, "messaging.deleteTopic", scope="topics.write",
             input=i.TopicRef, status=204),
    Endpoint("GET", S, tp.subscribers_list, "messaging.listSubscribers", scope="subscribers.read",
             input=i.SubscribersList, response="subscriberList"),
    Endpoint("POST", S, tp.subscriber_create, "messaging.createSubscriber", scope="subscribers.write",
             input=i.SubscriberCreate, status=201, response="subscriber"),
    Endpoint("GET", S + "/{subscriberId}", tp.subscriber_get, "messaging.getSubscriber", scope="subscribers.read",
             input=i.SubscriberRef, response="subscriber"),
    Endpoint("DELETE", S + "/{subscriberId}", tp.subscriber_delete, "messaging.deleteSubscriber",
             scope="subscribers.write", input=i.SubscriberRef, status=204),
    Endpoint("GET", "/messaging/subscribers/{subscriberId}/logs", lg.logs_of("subscriber"),
             "messaging.listSubscriberLogs", scope="subscribers.read", input=i.SubscriberLogs, response="logList"),
    Endpoint("GET", M, m.messages_list, "messaging.listMessages", scope="messages.read", input=i.ListParams,
             response="messageList"),
    *[ep for channel, (create_in, update_in, title) in {
        "email": (i.EmailCreate, i.EmailUpdate, "Email"), "sms": (i.SmsCreate, i.SmsUpdate, "Sms"),
        "push": (i.PushCreate, i.PushUpdate, "Push")}.items() for ep in (
        Endpoint("POST", f"{M}/{channel}", m.message_create(channel), f"messaging.create{title}",
                 scope="messages.write", input=create_in, status=201, response="message"),
        Endpoint("PATCH", f"{M}/{channel}/{{messageId}}", m.message_update(channel), f"messaging.update{title}",
                 scope="messages.write", input=update_in, response="message"),
    )],
    Endpoint("GET", M + "/{messageId}", m.message_get, "messaging.getMessage", scope="messages.read",
             input=i.MessageRef, response="message"),
    Endpoint("DELETE", M + "/{messageId}", m.message_delete, "messaging.delete", scope="messages.write",
             input=i.MessageRef, status=204),
    Endpoint("GET", M + "/{messageId}/logs", lg.logs_of("message"), "messaging.listMessageLogs",
             scope="messages.read", input=i.MessageLogs, response="logList"),
    Endpoint("GET", M + "/{messageId}/targets", m.message_targets_list, "messaging.listTargets",
             scope="messages.read", input=i.MessageTargetsList, response="targetList"),
    # Users service: a user's targets
    Endpoint("GET", "/users/{userId}/targets", tg.targets_list, "users.listTargets", scope="targets.read",
             input=i.TargetsList, response="targetList"),
    Endpoint("POST", "/users/{userId}/targets", tg.target_create, "users.createTarget", scope="targets.write",
             input=i.TargetCreate, status=201, response="target"),
    Endpoint("GET", "/users/{userId}/targets/{targetId}", tg.target_get, "users.getTarget", scope="targets.read",
             input=i.TargetRef, response="target"),
    Endpoint("PATCH", "/users/{userId}/targets/{targetId}", tg.target_update, "users.updateTarget",
             scope="targets.write", input=i.TargetUpdate, response="target"),
    Endpoint("DELETE", "/users/{userId}/targets/{targetId}", tg.target_delete, "users.deleteTarget",
             scope="targets.write", input=i.TargetRef, status=204),
    # Account service: the signed-in user's push targets
    Endpoint("POST", "/account/targets/push", tg.push_target_create, "account.createPushTarget", scope="account",
             input=i.PushTargetCreate, status=201, response="target"),
    Endpoint("PUT", "/account/targets/{targetId}/push", tg.push_target_update, "account.updatePushTarget",
             scope="account", input=i.PushTargetUpdate, response="target"),
    Endpoint("PATCH", "/account/phone", account_update_phone, "account.updatePhone", scope="account",
             input=i.PhoneUpdate, response="user"),
    Endpoint("DELETE", "/account/targets/{targetId}/push", tg.push_target_delete, "account.deletePushTarget",
             scope="account", input=i.PushTargetRef, status=204),
]

"""SMS senders over the providers' documented HTTP APIs; ``data["content"]`` is the text, the
identifier an E.164 number (``+15550001111``).

* Twilio: ``POST /2010-04-01/Accounts/{accountSid}/Messages.json``, form ``To``/``From``/``Body``,
  HTTP Basic ``accountSid``:``authToken``; 201 on success, errors ``{code, message}``.
* Vonage (SMS API): ``POST /sms/json``, form ``api_key``/``api_secret``/``from``/``to``/``text``
  (numbers without ``+``); always 200, each ``messages[i].status`` ``"0"`` or an ``error-text``.
* Msg91 (Flow API): ``POST /api/v5/flow/``, header ``authkey``, JSON ``template_id``, ``sender``,
  ``recipients: [{mobiles, content}]``; ``{"type": "success"|"error", "message"}``.
* Telesign: ``POST /v1/messaging``, form ``phone_number``/``message``/``message_type=ARN``, HTTP
  Basic ``customerId``:``apiKey``; errors ``{status: {code, description}}``.
* Textmagic: ``POST /api/v2/messages``, headers ``X-TM-Username``/``X-TM-Key``, form ``text``,
  ``phones`` (without ``+``), ``from``; 201 on success, errors ``{code, message}``.
"""

from __future__ import annotations

from apps.messaging.senders import DeliveryError, HttpSender, answer_error, endpoint


class TwilioSender(HttpSender):
    def send(self, identifier: str, data: dict) -> None:
        sid = self.credentials.get("accountSid", "")
        r = self.post(f"{endpoint('twilio')}/2010-04-01/Accounts/{sid}/Messages.json",
                      data={"To": identifier, "From": self.options.get("from", ""), "Body": data.get("content", "")},
                      auth=(sid, self.credentials.get("authToken", "")))
        if r.status_code not in (200, 201):
            raise DeliveryError("Twilio " + answer_error(r, "message"))


class VonageSender(HttpSender):
    def send(self, identifier: str, data: dict) -> None:
        r = self.post(f"{endpoint('vonage')}/sms/json", data={
            "api_key": self.credentials.get("apiKey", ""), "api_secret": self.credentials.get("apiSecret", ""),
            "from": self.options.get("from", "").lstrip("+"), "to": identifier.lstrip("+"),
            "text": data.get("content", "")})
        if r.status_code != 200:
            raise DeliveryError("Vonage " + answer_error(r, "error-text", "title"))
        try:
            first = (r.json().get("messages") or [{}])[0]
        except (ValueError, AttributeError):
            raise DeliveryError("Vonage: unreadable answer") from None
        if str(first.get("status")) != "0":
            raise DeliveryError(f"Vonage status {first.get('status')}: {first.get('error-text', '')}")


class Msg91Sender(HttpSender):
    def send(self, identifier: str, data: dict) -> None:
        r = self.post(f"{endpoint('msg91')}/api/v5/flow/", headers={"authkey": self.credentials.get("authKey", "")},
                      json={"template_id": self.credentials.get("templateId", ""),
                            "sender": self.credentials.get("senderId", ""), "short_url": "0",
                            "recipients": [{"mobiles": identifier.lstrip("+"), "content": data.get("content", "")}]})
        try:
            body = r.json()
        except ValueError:
            body = {}
        if r.status_code != 200 or body.get("type") != "success":
            raise DeliveryError("Msg91 " + answer_error(r, "message"))


class TelesignSender(HttpSender):
    def send(self, identifier: str, data: dict) -> None:
        r = self.post(f"{endpoint('telesign')}/v1/messaging",
                      data={"phone_number": identifier.lstrip("+"), "message": data.get("content", ""),
                            "message_type": "ARN"},
                      auth=(self.credentials.get("customerId", ""), self.credentials.get("apiKey", "")))
        if r.status_code != 200:
            raise DeliveryError("Telesign " + answer_error(r, "status.description"))


class TextmagicSender(HttpSender):
    def send(self, identifier: str, data: dict) -> None:
        form = {"text": data.get("content", ""), "phones": identifier.lstrip("+")}
        if self.options.get("from"):
            form["from"] = self.options["from"].lstrip("+")
        r = self.post(f"{endpoint('textmagic')}/api/v2/messages", data=form,
                      headers={"X-TM-Username": self.credentials.get("username", ""),
                               "X-TM-Key": self.credentials.get("apiKey", "")})
        if r.status_code not in (200, 201):
            raise DeliveryError("Textmagic " + answer_error(r, "message"))


SENDERS = {"twilio": TwilioSender, "vonage": VonageSender, "msg91": Msg91Sender, "telesign": TelesignSender,
           "textmagic": TextmagicSender}

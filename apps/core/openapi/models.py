"""The response models of the OpenAPI document, as JSON schemas under ``components/schemas``.

Each model is written in a one-line notation, ``"field field? field:type ..."``:

* ``name`` is a required field (the server always sends it), ``name?`` an optional one;
* the type follows ``:``; none means a string. ``b`` boolean, ``i`` integer, ``n`` number,
  ``o`` object (any keys), ``any`` any JSON value, ``[t]`` an array of ``t``, ``@model`` another
  model of this table; a trailing ``~`` allows ``null`` too.

Models are open (``additionalProperties`` allowed): a row carries its table's columns, a user on
the Users routes its password hash, and a client must ignore fields it does not know. The field
lists are Appwrite's models as this server answers them (each app's ``responses.py``); a list
model is ``{total, <items>}``.
"""

from __future__ import annotations

import re
from typing import Any

_USER = ("$id $createdAt $updatedAt name password? hash? hashOptions?:o registration status:b "
         "labels:[s] passwordUpdate email phone emailVerification:b phoneVerification:b mfa:b prefs:o "
         "targets:[o] accessedAt")
_COLUMN = "key description type status error required:b array:b $createdAt $updatedAt"
_INDEX = "$id $createdAt $updatedAt key description type status error lengths:[i] orders?:[s~]~"
_TABLE = "$id $createdAt $updatedAt $permissions:[s] databaseId name description enabled:b bytesMax:n bytesUsed:n"
_ROW = "$id $sequence $databaseId $createdAt $updatedAt $permissions:[s]"

MODELS: dict[str, str] = {
    "error": "message code:i type version",
    "user": _USER,
    "session": (
        "$id $createdAt $updatedAt userId expire provider providerUid providerAccessToken "
        "providerAccessTokenExpiry providerRefreshToken ip osCode osName osVersion clientType "
        "clientCode clientName clientVersion clientEngine clientEngineVersion deviceName deviceBrand "
        "deviceModel countryCode countryName current:b factors:[s] secret mfaUpdatedAt"),
    "token": "$id $createdAt userId secret expire phrase",
    "jwt": "jwt",
    "preferences": "",
    "identity": (
        "$id $createdAt $updatedAt userId provider providerUid providerEmail providerAccessToken "
        "providerAccessTokenExpiry providerRefreshToken"),
    "log": (
        "event userId userEmail userName mode userType ip time osCode osName osVersion clientType "
        "clientCode clientName clientVersion clientEngine clientEngineVersion deviceName deviceBrand "
        "deviceModel countryCode countryName"),
    "mfaChallenge": "$id $createdAt userId expire",
    "mfaFactors": "totp:b phone:b email:b recoveryCode:b custom:b",
    "mfaRecoveryCodes": "recoveryCodes:[s]",
    "mfaType": "secret uri",
    "team": "$id $createdAt $updatedAt name total:i prefs:o",
    "membership": (
        "$id $createdAt $updatedAt userId userName userEmail userPhone teamId teamName invited joined "
        "confirm:b mfa:b userAccessedAt roles:[s]"),
    "locale": "ip countryCode country continentCode continent eu:b currency",
    "localeCode": "code name",
    "continent": "name code",
    "country": "name code",
    "currency": "symbol name symbolNative decimalDigits:i rounding:n code namePlural",
    "language": "name code nativeName",
    "phone": "code countryCode countryName",
    "bucket": (
        "$id $createdAt $updatedAt $permissions:[s] fileSecurity:b name enabled:b maximumFileSize:i "
        "allowedFileExtensions:[s] compression encryption:b antivirus:b transformations:b totalSize:i"),
    "file": (
        "$id bucketId $createdAt $updatedAt $permissions:[s] name folder key signature mimeType sizeOriginal:i "
        "sizeActual:i chunksTotal:i chunksUploaded:i encryption:b compression"),
    "resourceToken": "$id $createdAt resourceId resourceType expire:s~ secret accessedAt",
    "database": "$id name description $createdAt $updatedAt enabled:b type",
    "table": _TABLE + " rowSecurity:b columns:[o] indexes:[@index]",
    "collection": _TABLE + " documentSecurity:b attributes:[o] indexes:[@index]",
    "index": _INDEX + " columns?:[s] attributes?:[s]",
    "row": _ROW + " $tableId",
    "document": _ROW + " $collectionId",
    "transaction": "$id $createdAt $updatedAt status operations:i expiresAt",
    "healthStatus": "name ping:i status",
    "healthVersion": "version",
    "healthTime": "remoteTime:i localTime:i diff:i",
    "healthQueue": "size:i",
    "healthCertificate": "name subjectSN issuerOrganisation validFrom validTo signatureTypeSN",
    "healthAntivirus": "version status",
    "healthStats": "storage:o cache:o",
    # the Project and Webhooks services (apps.projects.api, apps.webhooks)
    "project": (
        "$id $createdAt $updatedAt name teamId region labels:[s] status onboarding:o smtpEnabled:b smtpSenderName "
        "smtpSenderEmail smtpReplyToName smtpReplyToEmail smtpHost smtpPort:i smtpUsername smtpPassword smtpSecure "
        "pingCount:i pingedAt consoleAccessedAt blocks:[o] authMethods:[o] services:[o] protocols:[o]"),
    "key": "$id $createdAt $updatedAt name description expire scopes:[s] secret accessedAt sdks:[s]",
    "ephemeralKey": "$id $createdAt $updatedAt name description expire scopes:[s] secret accessedAt sdks:[s]",
    "platform": "$id $createdAt $updatedAt name type",
    "platformWeb": "$id $createdAt $updatedAt name type hostname",
    "platformAndroid": "$id $createdAt $updatedAt name type applicationId fingerprints:[s]",
    "platformApple": "$id $createdAt $updatedAt name type bundleIdentifier",
    "platformLinux": "$id $createdAt $updatedAt name type packageName",
    "platformWindows": "$id $createdAt $updatedAt name type packageIdentifierName",
    "policy": "$id",
    "oAuth2Provider": "$id enabled:b",
    "variable": "$id $createdAt $updatedAt key description value secret:b resourceType resourceId",
    "mockNumber": "number otp $createdAt $updatedAt",
    "emailTemplate": "templateId locale message senderName senderEmail replyToEmail replyToName subject",
    "webhook": (
        "$id $createdAt $updatedAt name description url events:[s] tls:b authUsername authPassword secret "
        "enabled:b logs attempts:i"),
    "function": (
        "$id $createdAt $updatedAt execute:[s] name description enabled:b live:b logging:b runtime "
        "deploymentRetention:i deploymentId deploymentCreatedAt latestDeploymentId latestDeploymentCreatedAt "
        "latestDeploymentStatus scopes:[s] vars:[@variable] events:[s] schedule timeout:i entrypoint commands "
        "version installationId providerRepositoryId providerBranch providerRootDirectory providerSilentMode:b "
        "specification buildSpecification runtimeSpecification"),
    "deployment": (
        "$id $createdAt $updatedAt type resourceId resourceType entrypoint sourceSize:i buildSize:i totalSize:i "
        "buildId activate:b status buildLogs buildDuration:i providerRepositoryName providerRepositoryOwner "
        "providerRepositoryUrl providerCommitHash providerCommitAuthorUrl providerCommitAuthor "
        "providerCommitMessage providerCommitUrl providerBranch providerBranchUrl"),
    "execution": (
        "$id $createdAt $updatedAt $permissions:[s] functionId resourceId? resourceType? deploymentId trigger "
        "status requestMethod requestPath requestHeaders:[@headers] responseStatusCode:i responseBody "
        "responseHeaders:[@headers] logs errors duration:n scheduledAt?:s~"),
    "headers": "name value",
    "runtime": "$id key name version base image logo supports:[s]",
    "specification": "memory:i cpus:n enabled:b slug",
    # messaging
    "provider": "$id $createdAt $updatedAt name provider enabled:b type credentials:o options:o",
    "topic": "$id $createdAt $updatedAt name description emailTotal:i smsTotal:i pushTotal:i subscribe:[s]",
    "target": "$id $createdAt $updatedAt name userId providerId:s~ providerType identifier expired:b",
    "subscriber": "$id $createdAt $updatedAt targetId target:@target userId userName topicId providerType",
    "message": ("$id $createdAt $updatedAt providerType topics:[s] users:[s] targets:[s] scheduledAt:s~ "
                "deliveredAt:s~ deliveryErrors:[s] deliveredTotal:i data:o status"),
}

# Lists: model -> (items key, item model).
LISTS: dict[str, tuple[str, str]] = {
    "userList": ("users", "user"), "sessionList": ("sessions", "session"),
    "identityList": ("identities", "identity"), "logList": ("logs", "log"),
    "teamList": ("teams", "team"), "membershipList": ("memberships", "membership"),
    "localeCodeList": ("localeCodes", "localeCode"), "continentList": ("continents", "continent"),
    "countryList": ("countries", "country"), "currencyList": ("currencies", "currency"),
    "languageList": ("languages", "language"), "phoneList": ("phones", "phone"),
    "bucketList": ("buckets", "bucket"), "fileList": ("files", "file"),
    "resourceTokenList": ("tokens", "resourceToken"), "databaseList": ("databases", "database"),
    "tableList": ("tables", "table"), "collectionList": ("collections", "collection"),
    "indexList": ("indexes", "index"), "rowList": ("rows", "row"), "documentList": ("documents", "document"),
    "transactionList": ("transactions", "transaction"), "healthStatusList": ("statuses", "healthStatus"),
    "columnList": ("columns", "column"), "attributeList": ("attributes", "attribute"),
    "keyList": ("keys", "key"), "platformList": ("platforms", "platform"), "policyList": ("policies", "policy"),
    "oAuth2ProviderList": ("providers", "oAuth2Provider"),
    "variableList": ("variables", "variable"), "mockNumberList": ("mockNumbers", "mockNumber"),
    "emailTemplateList": ("templates", "emailTemplate"), "webhookList": ("webhooks", "webhook"),
    "functionList": ("functions", "function"), "deploymentList": ("deployments", "deployment"),
    "executionList": ("executions", "execution"),
    "runtimeList": ("runtimes", "runtime"), "specificationList": ("specifications", "specification"),
    "providerList": ("providers", "provider"), "topicList": ("topics", "topic"), "targetList": ("targets", "target"),
    "subscriberList": ("subscribers", "subscriber"), "messageList": ("messages", "message"),
}

# Column (attribute) kinds: the fields each adds to the common ones.
_STRING = "size:i default:s~ encrypt?:b"
COLUMN_KINDS: dict[str, str] = {
    "string": _STRING, "varchar": _STRING, "text": _STRING, "mediumtext": _STRING, "longtext": _STRING,
    "integer": "min:i max:i default:i~", "bigint": "min:i max:i default:i~",
    "float": "min:n max:n default:n~", "boolean": "default:b~",
    "datetime": "format default:s~", "email": "format size:i default:s~", "url": "format size:i default:s~",
    "ip": "format size:i default:s~", "enum": "format size:i elements:[s] default:s~",
    "point": "default:[any]~", "line": "default:[any]~", "polygon": "default:[any]~",
}
_RELATIONSHIP = "relationType twoWay:b twoWayKey onDelete side"

_TOKEN = re.compile(r"^(?P<name>[^:?]+)(?P<opt>\??)(?::(?P<type>.+))?$")
_SCALARS = {"s": "string", "b": "boolean", "i": "integer", "n": "number", "o": "object"}


def _type(text: str) -> dict[str, Any]:
    nullable = text.endswith("~")
    text = text.removesuffix("~")
    if text.startswith("["):
        schema: dict[str, Any] = {"type": "array", "items": _type(text[1:-1])}
    elif text.startswith("@"):
        schema = {"$ref": f"#/components/schemas/{text[1:]}"}
    elif text == "any":
        return {}
    else:
        schema = {"type": _SCALARS[text]}
    if nullable:
        if "$ref" in schema:
            return {"anyOf": [schema, {"type": "null"}]}
        schema["type"] = [schema["type"], "null"]
    return schema


def parse(notation: str) -> dict[str, Any]:
    """The JSON schema of one model written in this module's notation (an open object)."""
    props: dict[str, dict[str, Any]] = {}
    required: list[str] = []
    for token in notation.split():
        found = _TOKEN.match(token)
        if found is None:
            raise ValueError(f"bad model field {token!r}")
        props[found["name"]] = _type(found["type"] or "s")
        if not found["opt"]:
            required.append(found["name"])
    return {"type": "object", "properties": props, "required": required}


def _list(items_key: str, item: str) -> dict[str, Any]:
    return {"type": "object", "required": ["total", items_key], "properties": {
        "total": {"type": "integer"}, items_key: {"type": "array", "items": {"$ref": f"#/components/schemas/{item}"}}}}


def schemas() -> dict[str, dict[str, Any]]:
    """Every model as ``name -> JSON schema``: the table above, the lists, and a ``column<Kind>``
    and ``attribute<Kind>`` per column kind (``column`` and ``attribute`` accept any kind)."""
    out = {name: parse(notation) for name, notation in MODELS.items()}
    for prefix, related in (("column", "relatedTable"), ("attribute", "relatedCollection")):
        for kind, extra in (*COLUMN_KINDS.items(), ("relationship", f"{related} {_RELATIONSHIP}")):
            name = prefix + kind.capitalize()
            out[name] = parse(f"{_COLUMN} {extra}")
        out[prefix] = parse(_COLUMN)
    for name, (key, item) in LISTS.items():
        out[name] = _list(key, item)
    return out

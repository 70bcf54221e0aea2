"""The Project service routes (Appwrite 1.9): a server key manages its own project.

Scopes as Appwrite's: ``project.read``/``project.write`` (the project, labels, sign-in methods,
SMTP, variables), ``keys.*``, ``platforms.*``, ``policies.*``, ``templates.*``, ``mocks.*``.
"""

from apps.core.http.endpoint import Endpoint
from apps.projects.api import inputs as i
from apps.projects.api import keys as k
from apps.projects.api import oauth2 as o
from apps.projects.api import platforms as pl
from apps.projects.api import policies as po
from apps.projects.api import project as p
from apps.projects.api import variables as v

P = "/project"
PR, PW = "project.read", "project.write"
_PLATFORM_INPUTS = {
    "web": (i.WebPlatform, i.WebPlatformUpdate, "Web"), "android": (i.AndroidPlatform, i.AndroidPlatformUpdate, "Android"),
    "apple": (i.ApplePlatform, i.ApplePlatformUpdate, "Apple"), "linux": (i.LinuxPlatform, i.LinuxPlatformUpdate, "Linux"),
    "windows": (i.WindowsPlatform, i.WindowsPlatformUpdate, "Windows"),
}

endpoints = [
    Endpoint("GET", P, p.project_get, "project.get", scope=PR, response="project"),
    Endpoint("DELETE", P, p.project_delete, "project.delete", scope=PW, status=204),
    Endpoint("PUT", P + "/labels", p.labels_update, "project.updateLabels", scope=PW, input=i.Labels,
             response="project"),
    Endpoint("PATCH", P + "/auth-methods/{methodId}", p.auth_method_update, "project.updateAuthMethod", scope=PW,
             input=i.AuthMethod, response="project"),
    Endpoint("PATCH", P + "/services/{serviceId}", p.service_update, "project.updateService", scope=PW,
             input=i.ServiceStatus, response="project"),
    Endpoint("PATCH", P + "/protocols/{protocolId}", p.protocol_update, "project.updateProtocol", scope=PW,
             input=i.ProtocolStatus, response="project"),
    Endpoint("PATCH", P + "/smtp", p.smtp_update, "project.updateSMTP", scope=PW, input=i.Smtp, response="project"),
    Endpoint("POST", P + "/smtp/tests", p.smtp_test, "project.createSMTPTest", scope=PW, input=i.SmtpTest,
             status=204),
    Endpoint("GET", P + "/templates/email", p.templates_list, "project.listEmailTemplates", scope="templates.read",
             input=i.ListParams, response="emailTemplateList"),
    Endpoint("PATCH", P + "/templates/email", p.template_update, "project.updateEmailTemplate",
             scope="templates.write", input=i.TemplateUpdate, response="emailTemplate"),
    Endpoint("GET", P + "/templates/email/{templateId}", p.template_get, "project.getEmailTemplate",
             scope="templates.read", input=i.TemplateRef, response="emailTemplate"),
    # keys
    Endpoint("GET", P + "/keys", k.keys_list, "project.listKeys", scope="keys.read", input=i.ListParams,
             response="keyList"),
    Endpoint("POST", P + "/keys", k.key_create, "project.createKey", scope="keys.write", input=i.KeyCreate,
             status=201, response="key", errors=(403,)),
    Endpoint("POST", P + "/keys/ephemeral", k.ephemeral_key_create, "project.createEphemeralKey",
             scope="keys.write", input=i.EphemeralKeyCreate, status=201, response="ephemeralKey"),
    Endpoint("GET", P + "/keys/{keyId}", k.key_get, "project.getKey", scope="keys.read", input=i.KeyRef,
             response="key"),
    Endpoint("PUT", P + "/keys/{keyId}", k.key_update, "project.updateKey", scope="keys.write", input=i.KeyUpdate,
             response="key"),
    Endpoint("DELETE", P + "/keys/{keyId}", k.key_delete, "project.deleteKey", scope="keys.write", input=i.KeyRef,
             status=204),
    # platforms
    Endpoint("GET", P + "/platforms", pl.platforms_list, "project.listPlatforms", scope="platforms.read",
             input=i.ListParams, response="platformList"),
    *[Endpoint("POST", f"{P}/platforms/{kind}", pl.creator(kind), f"project.create{title}Platform",
               scope="platforms.write", input=create, status=201, response=f"platform{title}")
      for kind, (create, _, title) in _PLATFORM_INPUTS.items()],
    *[Endpoint("PUT", f"{P}/platforms/{kind}/{{platformId}}", pl.updater(kind), f"project.update{title}Platform",
               scope="platforms.write", input=update, response=f"platform{title}")
      for kind, (_, update, title) in _PLATFORM_INPUTS.items()],
    Endpoint("GET", P + "/platforms/{platformId}", pl.platform_get, "project.getPlatform", scope="platforms.read",
             input=i.PlatformRef, response="|".join(f"platform{t}" for _, _, t in _PLATFORM_INPUTS.values())),
    Endpoint("DELETE", P + "/platforms/{platformId}", pl.platform_delete, "project.deletePlatform",
             scope="platforms.write", input=i.PlatformRef, status=204),
    # policies
    Endpoint("GET", P + "/policies", po.policies_list, "project.listPolicies", scope="policies.read",
             input=i.ListParams, response="policyList"),
    Endpoint("GET", P + "/policies/{policyId}", po.policy_get, "project.getPolicy", scope="policies.read",
             input=po.PolicyRef, response="policy"),
    *[Endpoint("PATCH", f"{P}/policies/{policy}", po.updater(policy),
               "project.update" + "".join(w.capitalize() for w in policy.split("-")) + "Policy",
               scope="policies.write", input=schema,
               response="policy" if policy == "password-strength" else "project")
      for policy, schema in po.INPUTS.items()],
    # OAuth2 providers
    Endpoint("GET", P + "/oauth2", o.providers_list, "project.listOAuth2Providers", scope="project.oauth2.read",
             input=i.ListParams, response="oAuth2ProviderList"),
    Endpoint("GET", P + "/oauth2/{provider}", o.provider_get, "project.getOAuth2Provider",
             scope="project.oauth2.read", input=o.ProviderRef, response="oAuth2Provider"),
    *[Endpoint("PATCH", f"{P}/oauth2/{provider}", o.updater(provider), f"project.updateOAuth2{provider.capitalize()}",
               scope="project.oauth2.write", input=schema, response="oAuth2Provider")
      for provider, schema in o.INPUTS.items()],
    Endpoint("PATCH", P + "/oauth2/{provider}", o.provider_unsupported, "project.updateOAuth2Provider",
             scope="project.oauth2.write", input=o.ProviderAny, response="oAuth2Provider"),
    # variables and mock phones
    Endpoint("GET", P + "/variables", v.variables_list, "project.listVariables", scope=PR, input=i.ListParams,
             response="variableList"),
    Endpoint("POST", P + "/variables", v.variable_create, "project.createVariable", scope=PW,
             input=i.VariableCreate, status=201, response="variable"),
    Endpoint("GET", P + "/variables/{variableId}", v.variable_get, "project.getVariable", scope=PR,
             input=i.VariableRef, response="variable"),
    Endpoint("PUT", P + "/variables/{variableId}", v.variable_update, "project.updateVariable", scope=PW,
             input=i.VariableUpdate, response="variable"),
    Endpoint("DELETE", P + "/variables/{variableId}", v.variable_delete, "project.deleteVariable", scope=PW,
             input=i.VariableRef, status=204),
    Endpoint("GET", P + "/mock-phones", v.mocks_list, "project.listMockPhones", scope="mocks.read",
             input=i.ListParams, response="mockNumberList"),
    Endpoint("POST", P + "/mock-phones", v.mock_create, "project.createMockPhone", scope="mocks.write",
             input=i.MockCreate, status=201, response="mockNumber"),
    Endpoint("GET", P + "/mock-phones/{number}", v.mock_get, "project.getMockPhone", scope="mocks.read",
             input=i.MockRef, response="mockNumber"),
    Endpoint("PUT", P + "/mock-phones/{number}", v.mock_update, "project.updateMockPhone", scope="mocks.write",
             input=i.MockCreate, response="mockNumber"),
    Endpoint("DELETE", P + "/mock-phones/{number}", v.mock_delete, "project.deleteMockPhone", scope="mocks.write",
             input=i.MockRef, status=204),
]

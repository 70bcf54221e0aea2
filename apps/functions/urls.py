"""The Functions service routes (Appwrite 1.8): one declaration per endpoint. Project-level
variables (``/project/variables``) are the Project service's (apps.projects); executions read them."""

from apps.core.http.endpoint import Endpoint
from apps.functions import inputs as i
from apps.functions.api import deployments as d
from apps.functions.api import executions as e
from apps.functions.api import functions as f

F = "/functions/{functionId}"
D = F + "/deployments"
DD = D + "/{deploymentId}"
X = F + "/executions"
V = F + "/variables"
R, W = "functions.read", "functions.write"

endpoints = [
    Endpoint("GET", "/functions", f.function_list, "functions.list", scope=R, input=i.ListParams,
             response="functionList"),
    Endpoint("POST", "/functions", f.function_create, "functions.create", scope=W, input=i.FunctionCreate,
             status=201, response="function"),
    Endpoint("GET", "/functions/runtimes", f.runtime_list, "functions.listRuntimes", scope=R, input=i.TotalOnly,
             response="runtimeList"),
    Endpoint("GET", "/functions/specifications", f.specification_list, "functions.listSpecifications", scope=R,
             input=i.SpecificationsList, response="specificationList"),
    Endpoint("GET", F, f.function_get, "functions.get", scope=R, input=i.FunctionRef, response="function"),
    Endpoint("PUT", F, f.function_update, "functions.update", scope=W, input=i.FunctionUpdate, response="function"),
    Endpoint("DELETE", F, f.function_delete, "functions.delete", scope=W, input=i.FunctionRef, status=204),
    Endpoint("PATCH", F + "/deployment", d.deployment_activate, "functions.updateFunctionDeployment", scope=W,
             input=i.DeploymentActivate, response="function"),
    Endpoint("GET", D, d.deployment_list, "functions.listDeployments", scope=R, input=i.FunctionChildList,
             response="deploymentList"),
    Endpoint("POST", D, d.deployment_create, "functions.createDeployment", scope=W, input=i.DeploymentCreate,
             status=202, response="deployment", multipart=True),
    Endpoint("POST", D + "/duplicate", d.deployment_duplicate, "functions.createDuplicateDeployment", scope=W,
             input=i.DeploymentDuplicate, status=202, response="deployment"),
    Endpoint("POST", D + "/template", d.deployment_template, "functions.createTemplateDeployment", scope=W,
             input=i.TemplateDeployment, status=202, response="deployment"),
    Endpoint("POST", D + "/vcs", d.deployment_unsupported, "functions.createVcsDeployment", scope=W,
             input=i.Unsupported, status=202, response="deployment"),
    Endpoint("GET", DD, d.deployment_get, "functions.getDeployment", scope=R, input=i.DeploymentRef,
             response="deployment"),
    Endpoint("DELETE", DD, d.deployment_delete, "functions.deleteDeployment", scope=W, input=i.DeploymentRef,
             status=204),
    Endpoint("GET", DD + "/download", d.deployment_download, "functions.getDeploymentDownload", scope=R,
             input=i.DeploymentDownload, response="any"),
    Endpoint("PATCH", DD + "/status", d.deployment_cancel, "functions.updateDeploymentStatus", scope=W,
             input=i.DeploymentRef, response="deployment"),
    Endpoint("GET", X, e.execution_list, "functions.listExecutions", scope="execution.read", input=i.ExecutionList,
             response="executionList"),
    Endpoint("POST", X, e.execution_create, "functions.createExecution", scope="execution.write",
             input=i.ExecutionCreate, abuse="executions.create", status=201, response="execution"),
    Endpoint("GET", X + "/{executionId}", e.execution_get, "functions.getExecution", scope="execution.read",
             input=i.ExecutionRef, response="execution"),
    Endpoint("DELETE", X + "/{executionId}", e.execution_delete, "functions.deleteExecution",
             scope="execution.write", input=i.ExecutionRef, status=204),
    Endpoint("GET", V, f.variable_list, "functions.listVariables", scope=R, input=i.VariableList,
             response="variableList"),
    Endpoint("POST", V, f.variable_create, "functions.createVariable", scope=W, input=i.VariableCreate,
             status=201, response="variable"),
    Endpoint("GET", V + "/{variableId}", f.variable_get, "functions.getVariable", scope=R, input=i.VariableRef,
             response="variable"),
    Endpoint("PUT", V + "/{variableId}", f.variable_update, "functions.updateVariable", scope=W,
             input=i.VariableUpdate, response="variable"),
    Endpoint("DELETE", V + "/{variableId}", f.variable_delete, "functions.deleteVariable", scope=W,
             input=i.VariableRef, status=204),
]

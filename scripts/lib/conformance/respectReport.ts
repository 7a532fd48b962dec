/**
 * Redocly Respect's JSON report (--json-output), read as far as `npm run conformance` needs it:
 * the workflows, their steps and checks; with the workflows' own step descriptions and each failed
 * check in a line. Respect's report format is its own, so what is read is checked as it is read.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { parse as parseYaml } from 'yaml';
import { projectRoot } from '../../../src/shared/paths.js';
import { isNode } from '../operations.js';

export interface CheckResult {
  name: string;
  passed: boolean;
  severity: string;
  message: string;
}
export interface StepResult {
  workflowId: string;
  stepId: string;
  method: string;
  url: string;
  statusCode: number;
  headers: Record<string, string>;
  body: unknown;
  checks: CheckResult[];
}
export interface WorkflowResult {
  file: string;
  workflowId: string;
  steps: StepResult[];
  /** Workflows run from inside this one (an Arazzo goto); counted as workflows of their own. */
  nested: WorkflowResult[];
}

export class ReportError extends Error {}

function field(record: Record<string, unknown>, name: string): Record<string, unknown> {
  const value = record[name];
  if (!isNode(value)) throw new ReportError(`"${name}" is not an object`);
  return value;
}
function list(record: Record<string, unknown>, name: string): unknown[] {
  const value = record[name];
  if (!Array.isArray(value)) throw new ReportError(`"${name}" is not a list`);
  return value;
}
function text(record: Record<string, unknown>, name: string): string {
  const value = record[name];
  return typeof value === 'string' ? value : '';
}

function readWorkflow(file: string, raw: unknown): WorkflowResult {
  if (!isNode(raw)) throw new ReportError('a workflow is not an object');
  const workflow: WorkflowResult = { file, workflowId: text(raw, 'workflowId'), steps: [], nested: [] };
  for (const item of list(raw, 'executedSteps')) {
    if (!isNode(item)) throw new ReportError('a step is not an object');
    if (Array.isArray(item.executedSteps)) {
      workflow.nested.push(readWorkflow(file, item));
      continue;
    }
    const request = field(item, 'request');
    const response = field(item, 'response');
    const headers: Record<string, string> = {};
    for (const [name, value] of Object.entries(isNode(response.headers) ? response.headers : {})) headers[name.toLowerCase()] = String(value);
    workflow.steps.push({
      workflowId: text(item, 'workflowId') || workflow.workflowId,
      stepId: text(item, 'stepId'),
      method: text(request, 'method').toUpperCase(),
      url: text(request, 'url'),
      statusCode: typeof response.statusCode === 'number' ? response.statusCode : 0,
      headers,
      body: response.body,
      checks: list(item, 'checks').map((check) => {
        if (!isNode(check)) throw new ReportError('a check is not an object');
        return { name: text(check, 'name'), passed: check.passed === true, severity: text(check, 'severity') || 'error', message: text(check, 'message') };
      }),
    });
  }
  return workflow;
}

export function readReport(path: string): WorkflowResult[] {
  const report: unknown = JSON.parse(readFileSync(path, 'utf8'));
  if (!isNode(report)) throw new ReportError('the report is not an object');
  return Object.entries(field(report, 'files')).flatMap(([file, result]) => {
    if (!isNode(result)) throw new ReportError(`the result of ${file} is not an object`);
    return list(result, 'executedWorkflows').map((workflow) => readWorkflow(file, workflow));
  });
}

/** Step descriptions, shown with a failed step: they say what it checks and what to do. */
export function stepDescriptions(file: string): Map<string, string> {
  const descriptions = new Map<string, string>();
  const document: unknown = parseYaml(readFileSync(join(projectRoot, file), 'utf8'));
  for (const workflow of isNode(document) && Array.isArray(document.workflows) ? document.workflows : []) {
    if (!isNode(workflow)) continue;
    for (const step of Array.isArray(workflow.steps) ? workflow.steps : []) {
      if (isNode(step) && typeof step.description === 'string') descriptions.set(`${text(workflow, 'workflowId')}/${text(step, 'stepId')}`, step.description.trim().replace(/\s+/g, ' '));
    }
  }
  return descriptions;
}

/** A failed check in a line: the condition as written in the workflow, not Respect's wording around it. */
export function describeCheck(check: CheckResult): string {
  // Respect's guess at the cause of an expression error is about the workflow, not the deployment.
  const message = check.message.replace(/\s+/g, ' ').trim().split('. This could be because')[0] ?? '';
  const criterion = /^(?:Checking (\w+) criteria: (.*)|Failed to pass (\{.*?\}): (.*))$/.exec(message);
  if (!criterion) return `${check.name}: ${message}`;
  const [, kind, written, failedWritten, why] = criterion;
  let parsed: unknown;
  try {
    parsed = JSON.parse(written ?? failedWritten ?? '');
  } catch {
    parsed = undefined;
  }
  // A jsonpath criterion is reported with its condition alone; its context is the body in these workflows.
  if (!isNode(parsed)) return kind === 'jsonpath' ? `$response.body matches the JSONPath ${written ?? ''}` : `${check.name}: ${message}`;
  const condition = typeof parsed.condition === 'string' ? parsed.condition : '';
  const context = typeof parsed.context === 'string' ? parsed.context : '';
  const shown = parsed.type === 'regex' ? `${context} matches /${condition}/` : parsed.type === 'jsonpath' ? `${context} matches the JSONPath ${condition}` : condition;
  return why ? `${shown} (${why.split('. ')[0]})` : shown;
}

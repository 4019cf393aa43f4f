/**
 * The state the OpenAI adapter hands the pipeline to persist: the uploaded input file's id. It is
 * written after the upload (so a retried create reuses the file instead of uploading again) and
 * kept with the job (so cleanup can delete the file once the job has ended).
 */

export interface OpenAIJobState {
  inputFileId: string;
}

export function jobStateText(state: OpenAIJobState): string {
  return JSON.stringify({ inputFileId: state.inputFileId });
}

/** The state in `text`, or null when there is none or it is not this adapter's. */
export function parseJobState(text: string | null): OpenAIJobState | null {
  if (!text) return null;
  try {
    const value = JSON.parse(text) as { inputFileId?: unknown };
    return typeof value?.inputFileId === 'string' && value.inputFileId !== ''
      ? { inputFileId: value.inputFileId }
      : null;
  } catch {
    return null;
  }
}

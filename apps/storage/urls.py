"""The storage routes: one declaration per endpoint."""

from apps.core.http.endpoint import Endpoint
from apps.storage.api import buckets, content, files, tokens
from apps.storage.api import inputs as i

B = "/storage/buckets/{bucketId}"
F = B + "/files"
FF = F + "/{fileId}"

endpoints = [
    Endpoint("POST", "/storage/buckets", buckets.bucket_create, "storage.createBucket", scope="buckets.write",
             input=i.BucketCreate, status=201, response="bucket"),
    Endpoint("GET", "/storage/buckets", buckets.bucket_list, "storage.listBuckets", scope="buckets.read",
             input=i.ListParams, response="bucketList"),
    Endpoint("GET", B, buckets.bucket_get, "storage.getBucket", scope="buckets.read", input=i.BucketRef,
             response="bucket"),
    Endpoint("PUT", B, buckets.bucket_update, "storage.updateBucket", scope="buckets.write",
             input=i.BucketUpdate, response="bucket"),
    Endpoint("DELETE", B, buckets.bucket_delete, "storage.deleteBucket", scope="buckets.write",
             input=i.BucketRef, status=204),
    Endpoint("POST", F, files.file_create, "storage.createFile", scope="files.write", input=i.FileCreate,
             abuse="files.create", status=201, response="file", multipart=True),
    Endpoint("GET", F, files.file_list, "storage.listFiles", scope="files.read", input=i.FilesList,
             response="fileList"),
    Endpoint("GET", FF, files.file_get, "storage.getFile", scope="files.read", input=i.FileRef,
             response="file"),
    Endpoint("PUT", FF, files.file_update, "storage.updateFile", scope="files.write", input=i.FileUpdate,
             response="file"),
    Endpoint("DELETE", FF, files.file_delete, "storage.deleteFile", scope="files.write", input=i.FileRef,
             abuse="files.delete", status=204),
    Endpoint("GET", FF + "/download", content.file_download, "storage.getFileDownload", scope="files.read",
             input=i.FileRef, response="any"),
    Endpoint("GET", FF + "/view", content.file_view, "storage.getFileView", scope="files.read",
             input=i.FileRef, response="any"),
    Endpoint("GET", FF + "/preview", content.file_preview, "storage.getFilePreview", scope="files.read",
             input=i.FilePreview, response="any"),
    # The Tokens service (file tokens): API keys only.
    Endpoint("POST", "/tokens/buckets/{bucketId}/files/{fileId}", tokens.token_create, "tokens.createFileToken",
             scope="tokens.write", input=tokens.FileTokenCreate, abuse="tokens.create", status=201,
             response="resourceToken"),
    Endpoint("GET", "/tokens/buckets/{bucketId}/files/{fileId}", tokens.token_list, "tokens.list",
             scope="tokens.read", input=tokens.FileTokenList, response="resourceTokenList"),
    Endpoint("GET", "/tokens/{tokenId}", tokens.token_get, "tokens.get", scope="tokens.read",
             input=tokens.TokenRef, response="resourceToken"),
    Endpoint("PATCH", "/tokens/{tokenId}", tokens.token_update, "tokens.update", scope="tokens.write",
             input=tokens.TokenUpdate, abuse="tokens.update", response="resourceToken"),
    Endpoint("DELETE", "/tokens/{tokenId}", tokens.token_delete, "tokens.delete", scope="tokens.write",
             input=tokens.TokenRef, status=204),
]
